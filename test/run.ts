/**
 * `npm test`: with no DATABASE_URL, start one embedded Postgres for the whole run (each
 * test file then creates databases of its own on it), prepare one migrated database that
 * every test database is copied from, run tap, stop and remove the cluster. Each run has a
 * cluster of its own, so two runs at once never stop each other's. However the run ends (a
 * failing step, Ctrl-C, a SIGTERM) the cluster is stopped and its directory removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
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
import { uwsLoads } from './helpers/uws.ts';
import { checkRunStatements, resetStatements, STATEMENT_STATS } from './routing/statements.ts';
import {
  BUILD_DIR,
  byLayer,
  compare,
  FLOOR_FILE,
  RAW_DIR,
  readFloors,
  SUMMARY_FILE,
  type Summary,
} from './coverage.ts';

const TAP = path.resolve('node_modules/tap/dist/esm/run.mjs');
const UNIT_TESTS = 'test/**/*.unit.test.ts';
/** Beside this file, not under the working directory: test/run.test.ts runs this file from a project of its own. */
const PRELOAD = new URL('preload.mjs', import.meta.url).href;
/**
 * `unit` first (npm run test:unit): the unit tier alone. `built` first (npm test, after
 * `scripts/build.ts --tests`): the test files run as the JavaScript that build last compiled
 * under BUILD_DIR, with no TypeScript loader in their processes; test files and folders named
 * under test/ are run from there. Without it, tsx compiles each process's TypeScript as it
 * loads. The other arguments are tap's.
 */
const unit = process.argv[2] === 'unit';
const built = process.argv[2] === 'built';
const fromBuild = (arg: string) =>
  /^test(\/|$)/.test(arg) ? path.join(BUILD_DIR, arg.replace(/\.ts$/, '.js')) : arg;
const args = process.argv.slice(unit || built ? 3 : 2);
const tapArgs = built
  ? [`--include=${BUILD_DIR}/test/**/*.test.js`, ...args.map(fromBuild)]
  : ['--node-arg=--import=tsx', ...args];

if (built && !existsSync(BUILD_DIR)) {
  console.error(
    `test/run.ts built: nothing compiled in ${BUILD_DIR}: run \`node --import tsx scripts/build.ts --tests\` first (npm test does)`,
  );
  process.exit(1);
}

let running: ChildProcess | null = null;
let stoppedBy: NodeJS.Signals | null = null;

/**
 * tap runs in a process group of its own, with its test files and whatever they start, and a
 * signal to this run (Ctrl-C, or a SIGTERM from CI or `timeout`) stops that group with SIGTERM:
 * tap passes a signal on to its test files once, and a file still waiting on something lingers
 * after the first. The run then goes on to its cleanup and ends with the signal's status.
 */
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stoppedBy) return;
    stoppedBy = signal;
    if (running?.pid) process.kill(-running.pid, 'SIGTERM');
  });
}

function run(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, command, { stdio: 'inherit', env, detached: true });
  running = child;
  return new Promise((resolve) =>
    child.on('exit', (status, signal) => {
      running = null;
      resolve(status ?? (signal ? 1 : 0));
    }),
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

/** The uWS transport's folder. */
const UWS_FOLDER = 'src/web/http/uws/';

/**
 * Prints each layer's line coverage; after a whole run (no arguments), a layer below its floor
 * fails the run. Returns the run's status.
 */
function checkCoverage(code: number): number {
  const whole = args.length === 0;
  if (!existsSync(SUMMARY_FILE)) {
    console.log(`\nno coverage summary (${SUMMARY_FILE})`);
    return whole ? code || 1 : code;
  }
  const read = JSON.parse(readFileSync(SUMMARY_FILE, 'utf8')) as Summary;
  // Where no uWS build loads, every server of the run served on node:http: the uWS transport is
  // measured by the run that loads it (npm run test:node24), not counted here as unrun.
  const summary = uwsLoads
    ? read
    : (Object.fromEntries(
        Object.entries(read).filter(([file]) => !file.includes(UWS_FOLDER)),
      ) as Summary);
  const { lines, below } = compare(byLayer(summary, process.cwd()), readFloors(), whole);
  console.log(`\nLine coverage by layer (floors in ${FLOOR_FILE}):`);
  for (const line of lines) console.log(`  ${line}`);
  if (!uwsLoads) console.log(`  (${UWS_FOLDER} left out: no uWS build loads here)`);
  if (!whole) {
    console.log('  (some files only: the floors apply to a whole run)');
    return code;
  }
  if (below.length === 0) return code;
  console.log(`coverage of ${below.join(', ')} fell below its floor`);
  return code || 1;
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}

/**
 * Two test files per core: a file spends about half its time waiting (on timers, Postgres,
 * child processes), so one per core left the machine 40% idle (npm test: 7.7 min with 2 jobs,
 * 4.9 min with 4, on 2 cores). `--jobs N` on the command line wins.
 */
const jobs = args.some((arg) => /^(--jobs|-j)/.test(arg))
  ? []
  : [`--jobs=${2 * os.availableParallelism()}`];

/** The status a run stopped by a signal ends with, as a shell reports one. */
const signalStatus = (signal: NodeJS.Signals) => 128 + os.constants.signals[signal];
if (stoppedBy) process.exit(signalStatus(stoppedBy));

/**
 * The unit tier (test/tiers.unit.test.ts keeps its files from reaching a database or a server):
 * no cluster, and no DATABASE_URL, so a unit test that reached for a database anyway would fail.
 */
if (unit) {
  const { DATABASE_URL: _none, ...env } = process.env;
  const code = await run([TAP, ...jobs, `--include=${UNIT_TESTS}`, ...tapArgs], env);
  process.exit(stoppedBy ? signalStatus(stoppedBy) : code);
}

const external = process.env.DATABASE_URL;
const clusterDir = path.resolve('.flowplan', 'test', String(process.pid));
const template = `t_template_${process.pid}`;
let cluster: Awaited<ReturnType<typeof startEmbedded>> | null = null;
let templateMade = false;
let code = 1;
try {
  const adminUrl =
    external ??
    (cluster = await startEmbedded(clusterDir, () => {}, {
      ...THROWAWAY_CLUSTER,
      ...STATEMENT_STATS,
    })).adminUrl;
  let statementsKept = false;
  if (!stoppedBy) {
    templateMade = true;
    await prepareTemplate(adminUrl, template);
    // From here on, what the tests run: the template's migrations are not the app's statements.
    statementsKept = await resetStatements(adminUrl);
  }
  if (!stoppedBy) {
    rmSync(SUMMARY_FILE, { force: true });
    rmSync(RAW_DIR, { recursive: true, force: true });
    code = await run([TAP, ...jobs, ...tapArgs], {
      ...process.env,
      DATABASE_URL: adminUrl,
      [TEMPLATE_ENV]: template,
      // Node's own coverage, of every process and worker thread of the run (see .taprc).
      NODE_V8_COVERAGE: path.resolve(RAW_DIR),
      // Before tsx, in each test file and what it runs with this environment: test/preload.mjs.
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${PRELOAD}`].filter(Boolean).join(' '),
    });
  }
  if (!stoppedBy && existsSync(RAW_DIR)) {
    const reported = await run(
      ['--max-old-space-size=8192', '--import=tsx', 'test/coverage-report.ts'],
      process.env,
    );
    code ||= reported;
  }
  if (!stoppedBy) code = checkCoverage(code);
  // Every statement the tests ran, routable by workspace (issue 36; a DATABASE_URL whose server
  // does not load pg_stat_statements is not checked).
  if (!stoppedBy && statementsKept)
    code = (await checkRunStatements(adminUrl, args.length === 0)) || code;
  else if (!stoppedBy) console.log('\nStatements not checked: pg_stat_statements is not loaded');
} catch (error) {
  // A step cut short by the signal fails as a matter of course: the signal is the news.
  if (!stoppedBy) throw error;
} finally {
  if (!external) {
    try {
      await cluster?.stop();
    } finally {
      rmSync(clusterDir, { recursive: true, force: true });
    }
  } else if (templateMade) {
    await dropDatabase(external, template);
  }
}
process.exit(stoppedBy ? signalStatus(stoppedBy) : code);
