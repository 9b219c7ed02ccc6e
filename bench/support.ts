/** What every benchmark shares: the machine it ran on and a fresh database to run against. */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { startEmbedded, type EmbeddedCluster } from '../src/store/embedded.ts';

export function machine() {
  return { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, node: process.version, os: `${os.platform()} ${os.release()}` };
}

/**
 * A fresh database on DATABASE_URL's server when set, else on an embedded cluster under
 * .flowplan/bench-<name>; dropped (and the cluster stopped) by `drop`.
 */
export async function benchDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  let cluster: EmbeddedCluster | null = null;
  const admin = process.env.DATABASE_URL ?? (cluster = await startEmbedded(path.resolve('.flowplan', `bench-${name}`))).adminUrl;
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
