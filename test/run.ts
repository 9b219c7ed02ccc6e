/**
 * `npm test`: with no DATABASE_URL, start one embedded Postgres for the whole run (each
 * test file then creates a database of its own on it), run tap, stop and remove the
 * cluster. Each run has a cluster of its own, so two runs at once never stop each other's.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { startEmbedded } from '../src/store/embedded.ts';

const args = process.argv.slice(2);
let cluster: Awaited<ReturnType<typeof startEmbedded>> | null = null;
const clusterDir = path.resolve('.flowplan', 'test', String(process.pid));
const env = { ...process.env };
if (!env.DATABASE_URL) {
  cluster = await startEmbedded(clusterDir);
  env.DATABASE_URL = cluster.adminUrl;
}
const tap = spawn(process.execPath, [path.resolve('node_modules/tap/dist/esm/run.mjs'), ...args], { stdio: 'inherit', env });
const code = await new Promise<number>((resolve) => tap.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
if (cluster) {
  await cluster.stop();
  rmSync(clusterDir, { recursive: true, force: true });
}
process.exit(code);
