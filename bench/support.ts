/** What every benchmark shares: the machine it ran on and a fresh database to run against. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { startApp, type RunningApp } from '../src/compose.ts';
import { loadConfig, type Overrides } from '../src/platform/config.ts';
import { startEmbedded, type EmbeddedCluster } from '../src/storage/embedded.ts';
import { migrate, type Migration } from '../src/storage/migrate.ts';
import type { Sql } from '../src/storage/db.ts';

export function machine() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    os: `${os.platform()} ${os.release()}`,
  };
}

/**
 * A fresh database on DATABASE_URL's server when set, else on an embedded cluster under
 * .flowplan/bench-<name>; dropped (and the cluster stopped) by `drop`.
 */
export async function benchDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  let cluster: EmbeddedCluster | null = null;
  const admin =
    process.env.DATABASE_URL ??
    (cluster = await startEmbedded(path.resolve('.flowplan', `bench-${name}`))).adminUrl;
  const database = `bench_${randomBytes(4).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database ${database}`);
  await sql.end();
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    drop: async () => {
      const drop = postgres(admin, { max: 1, onnotice: () => {} });
      await drop.unsafe(`drop database if exists ${database} with (force)`);
      await drop.end();
      await cluster?.stop();
    },
  };
}

/**
 * The real app on a bench database, logging warnings to stderr so stdout carries only the
 * JSON line. The rate limits (and the workspaces' budgets for costly requests) are raised so
 * benchmarks measure the service, not 429 refusals: at the default 120/min every key (and every
 * client address, for public views) would be refused within a second.
 */
/** An app on a free port; HTTP_TRANSPORT (the environment's, or `transport`) picks its transport. */
export function startBenchApp(
  databaseUrl: string,
  transport = process.env.HTTP_TRANSPORT,
  overrides: Overrides = {},
): Promise<RunningApp> {
  const log = pino({ level: 'warn', base: { service: 'flowplan' } }, pino.destination(2));
  return startApp(
    loadConfig(
      { LOG_LEVEL: 'warn', ...(transport ? { HTTP_TRANSPORT: transport } : {}) },
      {
        port: 0,
        databaseUrl,
        rateLimitPerMinute: 1e9,
        rateLimitBurst: 1e9,
        addressRateLimitPerMinute: 1e9,
        addressRateLimitBurst: 1e9,
        workspaceBudgetPerMinute: 1e9,
        workspaceBudgetBurst: 1e9,
        ...overrides,
      },
    ),
    { log },
  );
}

/** CPU time (ms) used so far by every `postgres` process on this machine (Linux /proc; 0 elsewhere). */
export function postgresCpuMs(clusterRoot?: string): number {
  const own = clusterRoot ? clusterCpuMs(clusterRoot) : null;
  if (own !== null) return own;
  let total = 0;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return 0;
  }
  const tick = 1000 / 100;
  for (const pid of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      const fields = stat.slice(close + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/**
 * CPU (ms) of the embedded cluster under `root` (bench databases: `.flowplan/bench-<name>`):
 * its postmaster's own and its ended children's (cutime, cstime: the backends that exited),
 * plus its live children's. Counting every process named postgres instead, as on a machine
 * with one cluster, mixes in other clusters, and a backend of theirs that exits makes the
 * total fall. Null when the cluster is not found (a DATABASE_URL of another server).
 */
function clusterCpuMs(root: string): number | null {
  let postmaster: string;
  try {
    postmaster = fs.readFileSync(`${root}/postgres/postmaster.pid`, 'utf8').split('\n')[0] ?? '';
  } catch {
    return null;
  }
  const fieldsOf = (pid: string) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const tick = 1000 / 100;
  let total = 0;
  try {
    const own = fieldsOf(postmaster);
    total += (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * tick;
  } catch {
    return null;
  }
  for (const pid of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const fields = fieldsOf(pid);
      if (fields[1] === postmaster) total += (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // The process ended meanwhile: its time is in the postmaster's cutime from now on.
    }
  }
  return total;
}

/** A random DAG with about three dependencies each, chained enough to keep most work blocked (bench:flow-ops, bench:plan). */
export function benchFlowBody(n: number, name = 'Bench flow') {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const tasks = Array.from({ length: n }, (_, i) => {
    const after = new Set<number>();
    for (let k = 0; k < 3 && i > 0; k++)
      after.add(Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 200))));
    return { name: `Task ${i}`, estimateHours: 4 + Math.floor(random() * 40), after: [...after] };
  });
  return { name, tasks };
}

/** The q-quantile of some timings, to two decimals. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(2),
  );
}

/**
 * Applies one migration while a writer on a connection of its own runs `write` every 2 ms, as
 * a busy service would: the migration's duration and the writer's latencies meanwhile (how long
 * the tables it writes were blocked).
 */
export async function migrationUnderWrites(
  sql: Sql,
  url: string,
  migration: Migration,
  write: (writer: Sql) => Promise<unknown>,
): Promise<{
  name: string;
  seconds: number;
  writes: number;
  writerMaxMs: number;
  writerP99Ms: number;
}> {
  let writing = true;
  const latencies: number[] = [];
  const writer = (async () => {
    const writerSql = postgres(url, { max: 1, onnotice: () => {} });
    while (writing) {
      const started = performance.now();
      await write(writerSql);
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await writerSql.end();
  })();
  const started = performance.now();
  await migrate(sql, [migration]);
  const seconds = (performance.now() - started) / 1000;
  writing = false;
  await writer;
  return {
    name: migration.name,
    seconds: Number(seconds.toFixed(2)),
    writes: latencies.length,
    writerMaxMs: Number(Math.max(0, ...latencies).toFixed(1)),
    writerP99Ms: Number(quantile(latencies, 0.99).toFixed(1)),
  };
}
