/**
 * The PNG export of bench:export's 50-task flow alone, through HTTP as bench:export asks for
 * it, for comparing two trees in turns on a shared machine:
 * `node --import tsx bench/export-png50.ts [TREE] [RUNS]` starts TREE's app (default: this
 * one) on a bench database, makes one warm-up export and RUNS more (default 9), and prints one
 * JSON line: { tree, p50Ms, bytes, times }. A request the node:http server resets is retried
 * (bench:export dies of them at load ~12).
 */
import path from 'node:path';

const tree = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const runs = Number(process.argv[3] ?? 9);
const { benchDatabase, startBenchApp } = (await import(
  path.join(tree, 'bench/support.ts')
)) as typeof import('./support.ts');
const { flowBody } = (await import(
  path.join(tree, 'bench/export-flows.ts')
)) as typeof import('./export-flows.ts');

async function retried(url: string, body: unknown, headers: Record<string, string>) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    } catch (err) {
      if (attempt === 4) throw err;
    }
  }
}

const database = await benchDatabase('png50');
const app = await startBenchApp(database.url);
if (!app.demo) throw new Error('the bench app has no demo key');
const auth = { authorization: `Bearer ${app.demo.key}`, 'content-type': 'application/json' };
const created = await retried(`${app.url}/v1/flows`, flowBody(50), auth);
const flowId = ((await created.json()) as { id: string }).id;
const times: number[] = [];
let bytes = 0;
for (let run = 0; run <= runs; run++) {
  const started = performance.now();
  const res = await retried(`${app.url}/v1/flows/${flowId}/exports`, { format: 'png' }, auth);
  const file = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`export: ${res.status} ${file.toString()}`);
  if (run > 0) times.push(performance.now() - started);
  bytes = file.length;
}
const sorted = [...times].sort((a, b) => a - b);
const p50Ms = Number((sorted[Math.floor(sorted.length / 2)] ?? NaN).toFixed(1));
process.stdout.write(
  `${JSON.stringify({ tree, p50Ms, bytes, times: times.map((t) => Math.round(t)) })}\n`,
);
await app.close();
await database.drop();
