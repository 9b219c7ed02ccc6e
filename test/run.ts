/**
 * `npm test`: with no DATABASE_URL, start one embedded Postgres for the whole run (each
 * test file then creates a database of its own on it), run tap, stop the cluster.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startEmbedded } from '../src/store/embedded.ts';

const args = process.argv.slice(2);
let cluster: Awaited<ReturnType<typeof startEmbedded>> | null = null;
const env = { ...process.env };
if (!env.DATABASE_URL) {
  cluster = await startEmbedded(path.resolve('.flowplan', 'test'));
  env.DATABASE_URL = cluster.adminUrl;
}
const tap = spawn(process.execPath, [path.resolve('node_modules/tap/dist/esm/run.mjs'), ...args], { stdio: 'inherit', env });
const code = await new Promise<number>((resolve) => tap.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
await cluster?.stop();
process.exit(code);
