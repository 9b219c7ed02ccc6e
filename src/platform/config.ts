/**
 * Every setting, read once from the environment, validated and frozen; passed down from
 * main.ts (never read process.env anywhere else, so tests can build a config of their own).
 * One schema names each setting's variable, default and range, and env-schema checks it: a
 * test's overrides pass through the same schema, so no test runs on a value a start refuses.
 */
import os from 'node:os';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import envSchema from 'env-schema';
import { parseTrustProxy, type TrustProxy } from './client-address.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** HTTP_TRANSPORT: which transport serves HTTP (src/web/http/transport.ts). */
export const HTTP_TRANSPORTS = ['auto', 'uws', 'node'] as const;

/** An integer from the variable `env`; null: not from the environment (only a test sets it). */
const integer = (env: string | null, fallback: number, minimum: number, maximum: number) =>
  Type.Integer({ ...(env ? { env } : {}), default: fallback, minimum, maximum });
/** A size in bytes: a whole number, or with a binary suffix (`64MiB`, `10GiB`). */
const bytes = (env: string, fallback: number, minimum: number) =>
  Type.Integer({
    env,
    unit: 'bytes',
    default: fallback,
    minimum,
    maximum: Number.MAX_SAFE_INTEGER,
  });
/** `1` or `0`. */
const flag = (env: string, fallback?: boolean) =>
  Type.Boolean({ env, ...(fallback === undefined ? {} : { default: fallback }) });
const text = (env: string, fallback: string) => Type.String({ env, default: fallback });
/** Unset: the server works it out from other settings (loadConfig). */
const optional = (env: string, format?: 'uri') =>
  Type.Optional(Type.String({ env, ...(format ? { format } : {}) }));

const Settings = Type.Object({
  port: integer('PORT', 8080, 0, 65535),
  host: text('HOST', '127.0.0.1'),
  /** `auto`: uWebSockets.js where a build of it loads, else node:http (README: Runtime). */
  httpTransport: Type.Union(
    HTTP_TRANSPORTS.map((name) => Type.Literal(name)),
    { env: 'HTTP_TRANSPORT', default: 'auto' },
  ),
  databaseUrl: optional('DATABASE_URL'),
  /** Default `http://HOST:PORT`. */
  baseUrl: optional('BASE_URL', 'uri'),
  /** Default `BASE_URL/app`. */
  appUrl: optional('APP_URL', 'uri'),
  /** Default `BASE_URL/p`. */
  publicUrl: optional('PUBLIC_URL', 'uri'),
  smtpUrl: optional('SMTP_URL'),
  workers: integer('WORKERS', Math.max(1, os.availableParallelism() - 1), 1, 256),
  offloadTasks: integer('OFFLOAD_TASKS', 5000, 1, 10_000_000),
  flowSessionsMax: integer('FLOW_SESSIONS_MAX', 1000, 1, 1_000_000),
  rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000_000),
  rateLimitBurst: integer('RATE_LIMIT_BURST', 240, 1, 1_000_000_000),
  /**
   * What the costly part of requests (a large forecast, what-if or batch: all but their first
   * token) spends a minute, and at once, of one workspace's budget, all its credentials together
   * and across processes: minting keys does not multiply a workspace's share of the pool.
   */
  workspaceBudgetPerMinute: integer('WORKSPACE_BUDGET_PER_MINUTE', 120, 1, 1_000_000_000),
  workspaceBudgetBurst: integer('WORKSPACE_BUDGET_BURST', 240, 1, 1_000_000_000),
  /** What-ifs one workspace may run at once in one process; the next is refused 429. */
  whatIfConcurrency: integer('WHAT_IF_CONCURRENCY', 2, 1, 10_000),
  /** From this much work (task derivations, services/flows/commands.ts) a what-if's or batch's list runs on the pool's commands lane. */
  commandsOffloadWork: integer(null, 100_000, 0, 1_000_000_000),
  /** The per-client-address budget of routes without a credential (public views, the web app). */
  addressRateLimitPerMinute: integer('ADDRESS_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000_000),
  addressRateLimitBurst: integer('ADDRESS_RATE_LIMIT_BURST', 1200, 1, 1_000_000_000),
  /** Failed credential checks a client address (IPv6 by /64) may make a minute, and at once; then 429. */
  failedCredentialsPerMinute: integer('FAILED_CREDENTIALS_PER_MINUTE', 30, 1, 1_000_000),
  failedCredentialsBurst: integer('FAILED_CREDENTIALS_BURST', 60, 1, 1_000_000),
  /** Addresses whose failed checks are counted at once (the least recent forgotten): the memory bound under a flood. */
  failedCredentialAddresses: integer(null, 10_000, 1, 1_000_000),
  /** Which hops may name the client in X-Forwarded-For: a hop count or CIDRs (parseTrustProxy). */
  trustProxy: optional('TRUST_PROXY'),
  notifyQuietSeconds: integer('NOTIFY_QUIET_SECONDS', 120, 0, 86_400),
  /** A batch waits at most this long after its first event, however busy the person (quiet resets don't extend it). */
  notifyMaxWaitSeconds: integer('NOTIFY_MAX_WAIT_SECONDS', 900, 0, 86_400),
  /** Delay before the first retry of a failed notification email; each next one waits 4× longer. */
  notifyRetryBaseSeconds: integer('NOTIFY_RETRY_BASE_SECONDS', 60, 0, 86_400),
  /** `From` of notification mail; default `flowplan <notifications@BASE_URL host>`. */
  mailFrom: optional('MAIL_FROM'),
  /** False (JOBS=0): this process enqueues jobs but runs no job workers or schedules. */
  jobWorkers: flag('JOBS', true),
  /** How often schedules (the digest tick, maintenance) are checked for being due. */
  cronCheckSeconds: integer('JOBS_CRON_CHECK_SECONDS', 30, 1, 45),
  webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE', false),
  /** Not whole seconds only: tests retry in fractions of one. */
  webhookRetryBaseSeconds: Type.Number({
    env: 'WEBHOOK_RETRY_BASE_SECONDS',
    default: 5,
    minimum: 0,
    maximum: 86_400,
  }),
  /** One webhook attempt gives up after this long (connect, send and answer). */
  webhookTimeoutSeconds: integer('WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60),
  /** Webhook deliveries a process starts per second while its API is busy; unbounded when quiet. */
  webhookBusyRate: integer('WEBHOOK_BUSY_RATE', 5, 1, 1_000_000),
  /** Webhook attempts a process has in flight at most. */
  webhookConcurrency: integer('WEBHOOK_CONCURRENCY', 128, 1, 10_000),
  /** Attempts in flight for one workspace's endpoints, across processes: a slow tenant's share. */
  webhookWorkspaceInFlight: integer('WEBHOOK_WORKSPACE_IN_FLIGHT', 32, 1, 10_000),
  /** Attempts in flight to one endpoint, all its lanes together, across processes. */
  webhookEndpointInFlight: integer('WEBHOOK_ENDPOINT_IN_FLIGHT', 8, 1, 10_000),
  /** Timeouts in a row after which an endpoint's circuit opens. */
  webhookBreakerTimeouts: integer('WEBHOOK_BREAKER_TIMEOUTS', 5, 1, 1000),
  /** How long an open circuit defers the endpoint's attempts. */
  webhookBreakerCooldownSeconds: integer('WEBHOOK_BREAKER_COOLDOWN_SECONDS', 60, 1, 86_400),
  /** The timeout of an endpoint whose circuit has opened, until it answers again. */
  webhookBreakerTimeoutSeconds: integer('WEBHOOK_BREAKER_TIMEOUT_SECONDS', 2, 1, 60),
  logLevel: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { env: 'LOG_LEVEL', default: 'info' },
  ),
  /** Where embedded Postgres keeps its data when DATABASE_URL is unset. */
  dataDir: text('FLOWPLAN_DATA_DIR', '.flowplan'),
  /** Largest JSON body accepted. */
  maxBodyBytes: integer(null, 4 * MiB, 1, 1 * GiB),
  /** Largest attachment upload. */
  maxUploadBytes: integer(null, 25 * MiB, 1, 1 * GiB),
  /** Request body bytes one process holds at once across requests; past it, 503. */
  maxBufferedBodyBytes: bytes('MAX_BUFFERED_BODY_BYTES', 64 * MiB, 1 * MiB),
  /** Stored file bytes a workspace may hold. */
  attachmentQuotaBytes: bytes('ATTACHMENT_QUOTA_BYTES', 10 * GiB, 0),
  /** The Prometheus listener, apart from the API (0 picks a free port; default 9464, or 0 when PORT is). */
  metricsHost: text('METRICS_HOST', '127.0.0.1'),
  metricsPort: Type.Optional(Type.Integer({ env: 'METRICS_PORT', minimum: 0, maximum: 65535 })),
  /** Serve the web app on plain http at a non-loopback APP_URL anyway. */
  appAllowInsecure: flag('APP_ALLOW_INSECURE', false),
  /**
   * FLOWPLAN_DEMO: whether a start on an empty database creates the Demo workspace, its admin
   * key and owner, and prints their secrets. Default: yes, except under NODE_ENV=production.
   */
  demo: Type.Optional(flag('FLOWPLAN_DEMO')),
  /** Days the event log keeps events (whole day partitions are dropped after). */
  eventRetentionDays: integer('EVENT_RETENTION_DAYS', 7, 1, 3650),
  /** Bytes a stream subscriber may have waiting to be sent; past it, it is closed and resumes from its cursor. */
  streamMaxBufferedBytes: bytes('STREAM_MAX_BUFFERED_BYTES', 256 * KiB, 16 * KiB),
  /** Event streams (SSE and WebSocket) one credential may hold open on one process at once; past it, 429. */
  streamsPerCredential: integer('STREAMS_PER_CREDENTIAL', 20, 1, 1_000_000),
  /** Event streams one person may hold open on one process at once, across all their tokens; past it, 429. */
  streamsPerPerson: integer('STREAMS_PER_PERSON', 20, 1, 1_000_000),
  /** The outbox drain's idle poll, a safety net: every event write wakes the drain at commit. */
  outboxPollMs: integer(null, 1000, 1, 3_600_000),
});

type Settings = Static<typeof Settings>;
/** What a test may set in place of the environment: checked by the same schema. */
export type Overrides = Partial<Settings>;
type Derived = 'baseUrl' | 'appUrl' | 'publicUrl' | 'mailFrom' | 'metricsPort' | 'demo';
export type Config = Readonly<
  Omit<Settings, 'trustProxy'> & Required<Pick<Settings, Derived>> & { trustProxy: TrustProxy }
>;

type Env = Record<string, string | undefined>;
type Setting = TSchema & { env?: string; unit?: 'bytes' };
const SETTINGS = Object.entries(Settings.properties) as [keyof Settings, Setting][];

/**
 * env-schema's validator with the schema's own keywords and `uri`, made on the first load and
 * handed back on the next: tests load many configs, and a new one each time costs ~10 ms.
 */
let validator: Ajv | undefined;
const withKeywords = (fresh: Ajv) =>
  (validator = addFormats.default(fresh, ['uri']).addKeyword('env').addKeyword('unit'));

/** The environment's values by setting; empty counts as unset, as a shell's `NAME=` means. */
function fromEnvironment(env: Env): Partial<Record<keyof Settings, unknown>> {
  const given: Partial<Record<keyof Settings, unknown>> = {};
  for (const [key, schema] of SETTINGS) {
    const raw = schema.env === undefined ? undefined : env[schema.env];
    if (raw === undefined || raw === '') continue;
    given[key] =
      schema.unit === 'bytes'
        ? inBytes(raw)
        : schema.type === 'boolean'
          ? (FLAGS[raw] ?? raw)
          : raw;
  }
  return given;
}

const FLAGS: Record<string, boolean> = { '1': true, '0': false };

/** `64MiB` as a number; anything else is left for the schema to refuse. */
function inBytes(raw: string): number | string {
  const match = /^(\d+)\s*(KiB|MiB|GiB|TiB)?$/.exec(raw.trim());
  return match
    ? Number(match[1]) * 1024 ** ['', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(match[2] ?? '')
    : raw;
}

/** What the schema asks of a setting, in the words of a refusal. */
function expected(schema: Setting): string {
  if (schema.unit === 'bytes')
    return `a number of bytes of at least ${schema.minimum} (a suffix KiB, MiB, GiB or TiB may follow)`;
  if (schema.type === 'boolean') return '1 or 0';
  if (schema.format === 'uri') return 'an absolute URL';
  if (schema.anyOf)
    return `one of ${(schema.anyOf as { const: string }[]).map((s) => s.const).join(', ')}`;
  if (schema.type === 'integer') return `an integer from ${schema.minimum} to ${schema.maximum}`;
  if (schema.type === 'number') return `a number from ${schema.minimum} to ${schema.maximum}`;
  return 'text';
}

/** One line naming each setting refused (its variable, or the override's key) and what it was given. */
function refusal(error: unknown, env: Env, overrides: Overrides): Error {
  const errors = (error as { errors?: { instancePath: string }[] }).errors ?? [];
  const keys = [...new Set(errors.map((e) => e.instancePath.slice(1)))].filter(
    (key): key is keyof Settings => key in Settings.properties,
  );
  if (keys.length === 0) return error as Error;
  const lines = keys.map((key) => {
    const schema = Settings.properties[key] as Setting;
    const [name, raw] =
      key in overrides ? [key, overrides[key]] : [schema.env ?? key, env[schema.env ?? key]];
    return `${name} must be ${expected(schema)}, got ${JSON.stringify(raw)}`;
  });
  return new Error(lines.join('; '));
}

const normalised = (url: string) => new URL(url).toString().replace(/\/$/, '');

/** `flowplan <notifications@host>` for BASE_URL's host; an IP address becomes `localhost`. */
function defaultMailFrom(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  const domain = /^[\d.]+$|^\[|:/.test(host) ? 'localhost' : host;
  return `flowplan <notifications@${domain}>`;
}

export function loadConfig(env: Env = process.env, overrides: Overrides = {}): Config {
  let settings: Settings;
  try {
    settings = envSchema<Settings>({
      schema: Settings,
      data: [fromEnvironment(env), overrides],
      env: false,
      ajv: validator ?? { customOptions: withKeywords },
    });
  } catch (error) {
    throw refusal(error, env, overrides);
  }
  const baseUrl = settings.baseUrl
    ? normalised(settings.baseUrl)
    : `http://${settings.host}:${settings.port}`;
  const config: Config = {
    ...settings,
    baseUrl,
    appUrl: settings.appUrl ? normalised(settings.appUrl) : `${baseUrl}/app`,
    publicUrl: settings.publicUrl ? normalised(settings.publicUrl) : `${baseUrl}/p`,
    mailFrom: settings.mailFrom ?? defaultMailFrom(baseUrl),
    trustProxy: parseTrustProxy(settings.trustProxy),
    // An instance on a free API port (tests, a second local server) takes a free metrics port too.
    metricsPort: settings.metricsPort ?? (settings.port === 0 ? 0 : 9464),
    // A production start prints no secret into the logs a container keeps unless asked to.
    demo: settings.demo ?? env.NODE_ENV !== 'production',
  };
  refuseInsecureApp(config);
  return Object.freeze(config);
}

/**
 * The app's session and CSRF cookies are `__Host-`/`Secure` only over https; on plain http they
 * lose both, which is fine on a developer's loopback but not on a host others reach.
 */
function refuseInsecureApp(config: Config): void {
  const app = new URL(config.appUrl);
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(app.hostname);
  if (app.protocol === 'http:' && !loopback && !config.appAllowInsecure) {
    throw new Error(
      `APP_URL ${config.appUrl} is plain http on a host other than this machine: sign-in cookies would travel without Secure and without the __Host- prefix. ` +
        'Serve the app over https (set APP_URL, or BASE_URL, to an https:// address behind your TLS proxy), or set APP_ALLOW_INSECURE=1 to accept that.',
    );
  }
}
