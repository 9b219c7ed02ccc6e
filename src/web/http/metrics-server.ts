/**
 * /metrics on a listener of its own (METRICS_HOST:METRICS_PORT, loopback by default), the
 * Prometheus habit: scrapes run database queries (queue depths, connections), so they stay off
 * the API's port, out of reach of its clients and of its rate budgets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '../../platform/metrics.ts';

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function listenMetrics(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    response.setHeader('X-Content-Type-Options', 'nosniff');
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Only GET /metrics is served here\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      () =>
        response
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('metrics collection failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `cannot serve metrics on ${host}:${port} (${error.code ?? error.message}): set METRICS_PORT to a free port, or 0 for any`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
