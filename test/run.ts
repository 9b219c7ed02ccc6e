/**
 * `npm test`: with no DATABASE_URL, start one embedded Postgres for the whole run (each
 * test file then creates databases of its own on it), prepare one migrated database that
 * every test database is copied from, run tap, stop and remove the cluster. Each run has a
 * cluster of its own, so two runs at once never stop each other's.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';
import { Metrics } from '../src/platform/metrics.ts';
import { Jobs } from '../src/services/jobs/jobs.ts';
import { startEmbedded } from '../src/storage/embedded.ts';
import { migrate } from '../src/storage/migrate.ts';
import { syncCatalogue } from '../src/services/templates/templates.service.ts';
import { TEMPLATE_ENV, THROWAWAY_CLUSTER } from './helpers/database.ts';

const TAP = path.resolve('node_modules/tap/dist/esm/run.mjs');
const args = process.argv.slice(2);

function run(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, command, { stdio: 'inherit', env });
  return new Promise((resolve) =>
    child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))),
  );
}

/**
 * tap builds its Test class for the plugins .taprc names when they differ from the installed
 * build, but the run that notices still starts every test process with the old build's
 * loaders: on a fresh install, each file then loaded ts-node (about a second a process).
 */
if ((await TapConfig.load()).pluginSignature !== signature) {
  const built = await run([TAP, 'build'], process.env);
  if (built !== 0) process.exit(built);
}

/** The schema every test database starts from: migrations, the template catalogue and pg-boss's schema, no workspace. */
async function prepareTemplate(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name}`);
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  await migrate(sql);
  await syncCatalogue(sql);
  const jobs = new Jobs(url.toString(), sql, pino({ level: 'silent' }), new Metrics(), false);
  await jobs.start();
  await jobs.stop();
  await sql.end();
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}

let cluster: Awaited<ReturnType<typeof startEmbedded>> | null = null;
const clusterDir = path.resolve('.flowplan', 'test', String(process.pid));
const env = { ...process.env };
if (!env.DATABASE_URL) {
  cluster = await startEmbedded(clusterDir, () => {}, THROWAWAY_CLUSTER);
  env.DATABASE_URL = cluster.adminUrl;
}
const template = `t_template_${process.pid}`;
await prepareTemplate(env.DATABASE_URL, template);
env[TEMPLATE_ENV] = template;

/**
 * Two test files per core: a file spends about half its time waiting (on timers, Postgres,
 * child processes), so one per core left the machine 40% idle (npm test: 7.7 min with 2 jobs,
 * 4.9 min with 4, on 2 cores). `--jobs N` on the command line wins.
 */
const jobs = args.some((arg) => /^(--jobs|-j)/.test(arg))
  ? []
  : [`--jobs=${2 * os.availableParallelism()}`];
const code = await run([TAP, ...jobs, ...args], env);
await dropDatabase(env.DATABASE_URL, template);
if (cluster) {
  await cluster.stop();
  rmSync(clusterDir, { recursive: true, force: true });
}
process.exit(code);
