/**
 * The Dockerfile and compose.yaml, checked without Docker (this machine cannot build images).
 * The Dockerfile's stages are run in a clean temporary directory (test/helpers/dockerfile.ts):
 * its COPYs from this checkout, its npm commands (`npm ci`, the build, `npm ci --omit=dev`; each
 * install applies patches/), then its CMD on a test database, its HEALTHCHECK and the CLI in the
 * runtime tree. A COPY of a missing path, a failing npm step or a CMD that does not serve fails
 * here. compose.yaml is read line by line (no YAML dependency) for Postgres and two flowplan
 * replicas on it, whose settings must let flowplan start.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/platform/config.ts';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { hostPath, parseDockerfile, runDockerfile, type Stage } from '../helpers/dockerfile.ts';
import { operatorEnv, run, startServer } from '../helpers/process.ts';
import { uwsLoads } from '../helpers/uws.ts';

// Two `npm ci` runs and a build: minutes on a busy 2-core machine, past the runner's default.
t.setTimeout(20 * 60 * 1000);

const DOCKERFILE = readFileSync('Dockerfile', 'utf8');
const workspace = mkdtempSync(path.join(os.tmpdir(), 'flowplan-image-'));
t.teardown(() => rmSync(workspace, { recursive: true, force: true }));

/** The runtime stage's ENV, as a container of the image starts with it. */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  let inLastStage = false;
  const instructions = parseDockerfile(DOCKERFILE);
  const lastFrom = instructions.map((i) => i.keyword).lastIndexOf('FROM');
  instructions.forEach((instruction, index) => {
    if (index === lastFrom) inLastStage = true;
    if (!inLastStage || instruction.keyword !== 'ENV') return;
    for (const [, key, value] of instruction.args.matchAll(/(\w+)=(\S*)/g)) env[key!] = value!;
  });
  return env;
}

t.test('a Dockerfile step that is broken fails the run', async (t) => {
  const missing = DOCKERFILE.replace('COPY scripts ./scripts', 'COPY scripts-gone ./scripts');
  await t.rejects(
    runDockerfile(missing.replace(/RUN npm ci\n/, ''), {
      context: process.cwd(),
      workspace: path.join(workspace, 'broken'),
    }),
    { message: /COPY scripts-gone: no such file/ },
  );
  const shellCmd = 'FROM node:20-bookworm-slim\nCMD node dist/src/main.js\n';
  await t.rejects(
    runDockerfile(shellCmd, { context: process.cwd(), workspace: path.join(workspace, 'shell') }),
    { message: /CMD is not in exec form/ },
  );
});

t.test(
  'compose.yaml: Postgres and two flowplan replicas sharing it, with settings flowplan starts with',
  async (t) => {
    const services = composeServices(readFileSync('compose.yaml', 'utf8'));
    const postgres = Object.entries(services).find(([, service]) =>
      /^postgres:/.test(service.image ?? ''),
    );
    t.ok(postgres, 'a Postgres service');
    const replicas = Object.entries(services).filter(([, service]) => service.build === '.');
    t.equal(replicas.length, 2, 'two flowplan replicas built from this Dockerfile');
    if (!postgres) return;
    const [pgName, pg] = postgres;
    const expectedUrl = `postgres://${pg.environment.POSTGRES_USER}:${pg.environment.POSTGRES_PASSWORD}@${pgName}:5432/${pg.environment.POSTGRES_DB}`;
    for (const [name, service] of replicas) {
      t.equal(
        service.environment.DATABASE_URL,
        expectedUrl,
        `${name}: DATABASE_URL names the Postgres service and its credentials`,
      );
      t.equal(service.image, replicas[0]![1].image, `${name}: the same image`);
      // What the container does first: read its settings (the image's ENV, then the service's).
      const config = loadConfig({ ...imageEnv(), ...service.environment });
      t.equal(config.host, '0.0.0.0', `${name}: listens on every interface of its container`);
      t.match(
        config.appUrl,
        /^http:\/\/localhost:\d+\/app$/,
        `${name}: a loopback APP_URL, which flowplan accepts over plain http`,
      );
      const published = service.ports.map((port) => port.split(':'));
      t.ok(
        published.some(
          ([host, container]) =>
            config.baseUrl === `http://localhost:${host}` && container === String(config.port),
        ),
        `${name}: BASE_URL is the address it is published at`,
      );
    }
    const urls = replicas.map(([, service]) => service.environment.DATABASE_URL);
    t.equal(new Set(urls).size, 1, 'both replicas share one database');
  },
);

/**
 * The image's Node major: its steps run on that Node alone, where the image's uWebSockets.js
 * build loads (its glibc is 2.38 or newer: on Debian 12, npm run test:node24 runs them).
 */
const imageNode = /ARG NODE_IMAGE=node:(\d+)/.exec(DOCKERFILE)?.[1];
const onImageNode = imageNode === process.versions.node.split('.')[0] && uwsLoads;

t.test(
  'the Dockerfile: build, production install, start, health check, CLI',
  {
    skip:
      !onImageNode &&
      `the image runs Node ${imageNode} on glibc 2.38+: npm run test:node24 runs its steps`,
  },
  async (t) => {
    const stages: Stage[] = await runDockerfile(DOCKERFILE, {
      context: process.cwd(),
      workspace: path.join(workspace, 'image'),
      // Cache use only: what is installed is what package-lock.json says either way.
      npmEnv: {
        npm_config_prefer_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      },
      onStep: (step, ms) =>
        t.comment(
          `${step.length > 90 ? `${step.slice(0, 90)}…` : step}: ${(ms / 1000).toFixed(1)} s`,
        ),
    });
    const image = stages.at(-1)!;
    const base = stages.find((stage) => stage.image !== null)!;
    t.equal(
      /^node:(\d+)/.exec(base.image!)?.[1],
      process.versions.node.split('.')[0],
      `the image's Node major (${base.image}) is the one these steps ran on`,
    );

    const app = (file: string) => hostPath(image, path.posix.join(image.workdir, file));
    t.ok(existsSync(app('dist/src/main.js')), 'the built server is in the image');
    const uwsBinaries = readdirSync(app('node_modules/uWebSockets.js'), {
      recursive: true,
      encoding: 'utf8',
    }).filter((file) => file.endsWith('.node'));
    t.same(
      uwsBinaries,
      [`uws_${process.platform}_${process.arch}_${process.versions.modules}.node`],
      "uWebSockets.js keeps only this Node's binary",
    );
    t.match(
      readFileSync(app('node_modules/postgres/src/connection.js'), 'utf8'),
      /porsager\/postgres#1208, PR #1209/,
      "the production install applied patches/ (postgres.js's write to a closed connection)",
    );
    for (const dev of ['tsx', 'typescript', 'tap'])
      t.notOk(existsSync(app(`node_modules/${dev}`)), `no devDependency ${dev}`);
    t.notOk(existsSync(app('src')), 'no TypeScript sources: the image runs dist/');
    t.not(image.user, 'root', 'runs as an unprivileged user');
    t.equal(image.env.HOST, '0.0.0.0');
    t.equal(image.env.METRICS_HOST, '0.0.0.0');
    t.ok(
      image.exposed.includes(image.env.PORT!) && image.exposed.includes(image.env.METRICS_PORT!),
      'EXPOSE names the API and metrics ports',
    );
    t.match(image.healthcheck?.join(' ') ?? '', /\/readyz/, 'HEALTHCHECK asks /readyz');
    const [command, ...args] = image.cmd ?? [];
    t.equal(command, 'node', 'CMD runs node itself (PID 1 gets SIGTERM)');

    const databaseUrl = await createTestDatabase(t, { empty: true });
    const cwd = app('');
    const dataDir = hostPath(image, image.env.FLOWPLAN_DATA_DIR!);
    t.ok(existsSync(dataDir), 'FLOWPLAN_DATA_DIR exists in the image');

    // As the image starts with no BASE_URL: refused, one line, since plain http on 0.0.0.0 is not loopback.
    const bare = await run(process.execPath, args, {
      cwd,
      env: operatorEnv({ ...image.env, DATABASE_URL: databaseUrl, FLOWPLAN_DATA_DIR: dataDir }),
    });
    t.equal(bare.code, 1, 'without BASE_URL the container refuses to start');
    t.match(
      bare.stderr,
      /^flowplan: APP_URL http:\/\/0\.0\.0\.0:8080\/app is plain http[^\n]*\n$/,
      'saying why in one line',
    );

    // As compose starts it, but on loopback ports of this machine.
    const port = await freePort();
    const metricsPort = await freePort();
    const env = operatorEnv({
      ...image.env,
      DATABASE_URL: databaseUrl,
      BASE_URL: `http://localhost:${port}`,
      FLOWPLAN_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    const server = await startServer(t, process.execPath, args, { port, cwd, env });
    // NODE_ENV=production in the image: no demo, no secret in the logs a container keeps.
    t.notMatch(
      server.stdout(),
      /admin API key|fpk_|password/,
      'the first start prints no key or password',
    );
    t.match(server.stdout(), /The database has no workspace/, 'but how to make the first one');

    const [healthCommand, ...healthArgs] = image.healthcheck ?? [];
    t.equal(healthCommand, 'node');
    const health = await run(process.execPath, healthArgs, { cwd, env });
    t.equal(health.code, 0, `the HEALTHCHECK passes ${health.stderr}`);
    t.equal((await fetch(`${server.base}/readyz`)).status, 200, '/readyz 200');

    const cli = await run(process.execPath, ['bin/flowplan.js', 'migrate', '--json'], {
      cwd,
      env: { ...env, LOG_LEVEL: 'silent' },
    });
    t.equal(cli.code, 0, `the CLI runs in the image ${cli.stderr}`);
    t.same(JSON.parse(cli.stdout), { applied: [] }, 'the server had migrated the database');

    t.equal((await server.stop()).code, 0, 'SIGTERM: exits 0');

    const broken = await startServer(t, process.execPath, ['dist/src/missing.js'], {
      port: await freePort(),
      cwd,
      env,
    }).then(
      () => null,
      (error: unknown) => error,
    );
    t.match(
      String(broken),
      /exited .* before serving/,
      'a CMD that does not serve fails the check',
    );
  },
);

interface ComposeService {
  image?: string;
  build?: string;
  environment: Record<string, string>;
  ports: string[];
}

/** The `services:` of a compose file as this repository writes it (two-space indents, mapping-form environment). */
function composeServices(text: string): Record<string, ComposeService> {
  const services: Record<string, ComposeService> = {};
  let section: string | null = null;
  let service: ComposeService | null = null;
  let key: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^\s*(#|$)/.test(line)) continue;
    const indent = /^ */.exec(line)![0].length;
    const content = line.trim();
    if (indent === 0) {
      section = content.replace(/:.*$/, '');
      continue;
    }
    if (section !== 'services') continue;
    if (indent === 2) {
      service = { environment: {}, ports: [] };
      services[content.replace(/:$/, '')] = service;
      continue;
    }
    if (!service) continue;
    const unquote = (value: string) => value.trim().replace(/^(["'])(.*)\1$/, '$2');
    if (indent === 4) {
      const [, name = '', value = ''] = /^([\w-]+):\s*(.*)$/.exec(content) ?? [];
      key = name;
      if (name === 'image' || name === 'build') service[name] = unquote(value);
      continue;
    }
    if (key === 'environment' && indent === 6) {
      const [, name = '', value = ''] = /^(\w+):\s*(.*)$/.exec(content) ?? [];
      service.environment[name] = unquote(value);
    }
    if (key === 'ports' && indent === 6) service.ports.push(unquote(content.replace(/^-\s*/, '')));
  }
  return services;
}
