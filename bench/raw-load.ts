/**
 * A lean HTTP/1.1 load generator for GETs of big bodies: keep-alive connections on raw
 * sockets, one request in flight each, responses framed by Content-Length and never parsed
 * further. autocannon's parser spends more CPU per 30 KB body than the server does to send
 * it, and on a 2-core machine the client's cost is taken from the server; this one costs a
 * fraction, so what it measures is closer to what the server can do.
 */
import { Worker } from 'node:worker_threads';

export interface RawLoadResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerResponse: number;
  statuses: Record<string, number>;
}

const WORKER = `
const net = require('node:net');
const { parentPort, workerData: w } = require('node:worker_threads');
const HEADER_END = Buffer.from('\\r\\n\\r\\n');
const request = Buffer.from(w.request);
const latencies = [];
const statuses = {};
let requests = 0, bytes = 0, open = 0;
const stopAt = Date.now() + w.seconds * 1000;
function connection() {
  const socket = net.connect(w.port, w.host);
  socket.setNoDelay(true);
  open++;
  let pending = Buffer.alloc(0), need = -1, sentAt = 0;
  const send = () => { sentAt = performance.now(); socket.write(request); };
  socket.on('connect', send);
  socket.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (need < 0) {
        const end = pending.indexOf(HEADER_END);
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        const status = head.slice(9, 12);
        statuses[status] = (statuses[status] || 0) + 1;
        const length = /\\r\\ncontent-length: *(\\d+)/i.exec(head);
        need = length ? Number(length[1]) : 0;
        pending = pending.subarray(end + 4);
      }
      if (pending.length < need) return;
      bytes += need;
      pending = pending.subarray(need);
      need = -1;
      requests++;
      if ((requests & 7) === 0) latencies.push(performance.now() - sentAt);
      if (Date.now() >= stopAt) { socket.end(); return; }
      send();
    }
  });
  socket.on('error', () => {});
  socket.on('close', () => { if (--open === 0) parentPort.postMessage({ requests, bytes, latencies, statuses }); });
}
for (let i = 0; i < w.connections; i++) connection();
`;

/** GET `url` with `headers` over `connections` keep-alive connections spread over `threads` worker threads. */
export async function rawLoad(
  url: string,
  headers: Record<string, string>,
  options: { connections: number; seconds: number; threads: number },
): Promise<RawLoadResult> {
  const target = new URL(url);
  const lines = [
    `GET ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  const request = `${lines.join('\r\n')}\r\n\r\n`;
  const started = performance.now();
  const parts = await Promise.all(
    Array.from(
      { length: options.threads },
      (_, i) =>
        new Promise<{
          requests: number;
          bytes: number;
          latencies: number[];
          statuses: Record<string, number>;
        }>((resolve, reject) => {
          const connections =
            Math.floor(options.connections / options.threads) +
            (i < options.connections % options.threads ? 1 : 0);
          const worker = new Worker(WORKER, {
            eval: true,
            workerData: {
              host: target.hostname,
              port: Number(target.port),
              request,
              connections,
              seconds: options.seconds,
            },
          });
          worker.once('message', (m) => {
            void worker.terminate();
            resolve(m);
          });
          worker.once('error', reject);
        }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const requests = parts.reduce((sum, p) => sum + p.requests, 0);
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const p of parts)
    for (const [status, n] of Object.entries(p.statuses))
      statuses[status] = (statuses[status] ?? 0) + n;
  const at = (q: number) =>
    Number(
      (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1),
    );
  return {
    requests,
    seconds: Number(seconds.toFixed(2)),
    reqPerSec: Math.round(requests / seconds),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    bytesPerResponse: Math.round(
      parts.reduce((sum, p) => sum + p.bytes, 0) / Math.max(1, requests),
    ),
    statuses,
  };
}
