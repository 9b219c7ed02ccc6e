/**
 * `npm run bench:msgpack`: what MessagePack saves a poller against JSON, for a 10,000-task
 * flow and a 100-item work-view page, through the real server: bytes on the wire
 * (uncompressed) and the client's decode time (JSON.parse of the text against msgpackr's
 * unpack of the bytes; median of 30), plus the time to fetch each representation once it is
 * cached (median of 30). Prints one JSON line.
 */
import { unpack } from 'msgpackr';
import { benchDatabase, machine, startBenchApp } from './support.ts';

const TASKS = 10_000;
const RUNS = 30;

const database = await benchDatabase('msgpack');
const app = await startBenchApp(database.url);
const auth = { authorization: `Bearer ${app.demo!.key}` };

// A wide programme: chains of 10 tasks side by side, so many are ready (the work page fills).
const tasks = Array.from({ length: TASKS }, (_, i) => ({
  name: `Task ${i}`,
  estimateHours: 1 + (i % 8),
  ...(i % 10 ? { after: [i - 1] } : {}),
}));
const created = await fetch(`${app.url}/v1/flows`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Programme', tasks }),
});
if (created.status !== 201) throw new Error(`flow: ${created.status}`);
const flow = (await created.json()) as { id: string };

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(path: string) {
  const fetchBytes = async (accept: string) => {
    const started = performance.now();
    const response = await fetch(app.url + path, { headers: { ...auth, accept } });
    const bytes = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
    return { bytes, ms: performance.now() - started };
  };
  const json = await fetchBytes('application/json');
  const packed = await fetchBytes('application/msgpack');
  const fetchJson: number[] = [];
  const fetchPacked: number[] = [];
  const parseJson: number[] = [];
  const parsePacked: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    fetchJson.push((await fetchBytes('application/json')).ms);
    fetchPacked.push((await fetchBytes('application/msgpack')).ms);
    let started = performance.now();
    JSON.parse(json.bytes.toString('utf8'));
    parseJson.push(performance.now() - started);
    started = performance.now();
    unpack(packed.bytes);
    parsePacked.push(performance.now() - started);
  }
  const round = (n: number) => Number(n.toFixed(2));
  return {
    bytes: {
      json: json.bytes.length,
      msgpack: packed.bytes.length,
      ratio: round(packed.bytes.length / json.bytes.length),
    },
    decodeMs: { json: round(median(parseJson)), msgpack: round(median(parsePacked)) },
    fetchMs: { json: round(median(fetchJson)), msgpack: round(median(fetchPacked)) },
  };
}

const result = {
  name: 'msgpack',
  machine: machine(),
  flow10k: await measure(`/v1/flows/${flow.id}`),
  workPage100: await measure('/v1/work/available?size=100'),
};
process.stdout.write(JSON.stringify(result) + '\n');
await app.close();
await database.drop();
