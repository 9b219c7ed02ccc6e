/**
 * Every setting, read once from the environment, validated and frozen; passed down from
 * main.ts (never read process.env anywhere else, so tests can build a config of their own).
 */
import os from 'node:os';
import { parseTrustProxy, type TrustProxy } from './client-address.ts';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly baseUrl: string;
  readonly appUrl: string;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  readonly workers: number;
  readonly offloadTasks: number;
  readonly flowSessionsMax: number;
  readonly rateLimitPerMinute: number;
  readonly rateLimitBurst: number;
  /** The per-client-address budget of routes without a credential (public views, the web app). */
  readonly addressRateLimitPerMinute: number;
  readonly addressRateLimitBurst: number;
  /** Failed credential checks a client address (IPv6 by /64) may make a minute, and at once; then 429. */
  readonly failedCredentialsPerMinute: number;
  readonly failedCredentialsBurst: number;
  /** Addresses whose failed checks are counted at once (the least recent forgotten): the memory bound under a flood. */
  readonly failedCredentialAddresses: number;
  /** Which hops may name the client in X-Forwarded-For (TRUST_PROXY: a hop count or CIDRs); null: none. */
  readonly trustProxy: TrustProxy;
  readonly notifyQuietSeconds: number;
  /** A batch waits at most this long after its first event, however busy the person (quiet resets don't extend it). */
  readonly notifyMaxWaitSeconds: number;
  /** Delay before the first retry of a failed notification email; each next one waits 4× longer. */
  readonly notifyRetryBaseSeconds: number;
  /** `From` of notification mail (MAIL_FROM; default `flowplan <notifications@BASE_URL host>`). */
  readonly mailFrom: string;
  /** False: this process enqueues jobs but runs no job workers or schedules (JOBS=0). */
  readonly jobWorkers: boolean;
  /** How often schedules (the digest tick, maintenance) are checked for being due (JOBS_CRON_CHECK_SECONDS). */
  readonly cronCheckSeconds: number;
  readonly webhookAllowPrivate: boolean;
  readonly webhookRetryBaseSeconds: number;
  /** One webhook attempt gives up after this long (connect, send and answer). */
  readonly webhookTimeoutMs: number;
  /** Webhook deliveries a process starts per second while its API is busy (WEBHOOK_BUSY_RATE); unbounded when quiet. */
  readonly webhookBusyRate: number;
  /** Webhook attempts a process has in flight at most (WEBHOOK_CONCURRENCY). */
  readonly webhookConcurrency: number;
  /** Attempts in flight for one workspace's endpoints, across processes (WEBHOOK_WORKSPACE_IN_FLIGHT): a slow tenant's share. */
  readonly webhookWorkspaceInFlight: number;
  /** Attempts in flight to one endpoint, all its lanes together, across processes (WEBHOOK_ENDPOINT_IN_FLIGHT). */
  readonly webhookEndpointInFlight: number;
  /** Timeouts in a row after which an endpoint's circuit opens (WEBHOOK_BREAKER_TIMEOUTS). */
  readonly webhookBreakerTimeouts: number;
  /** How long an open circuit defers the endpoint's attempts (WEBHOOK_BREAKER_COOLDOWN_SECONDS). */
  readonly webhookBreakerCooldownSeconds: number;
  /** The timeout of an endpoint whose circuit has opened, until it answers again (WEBHOOK_BREAKER_TIMEOUT_SECONDS). */
  readonly webhookBreakerTimeoutMs: number;
  readonly logLevel: string;
  /** Where embedded Postgres keeps its data when DATABASE_URL is unset. */
  readonly dataDir: string;
  /** Largest JSON body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** Largest attachment upload, in bytes (25 MiB). */
  readonly maxUploadBytes: number;
  /** Request body bytes one process holds at once across requests (MAX_BUFFERED_BODY_BYTES); past it, 503. */
  readonly maxBufferedBodyBytes: number;
  /** Stored file bytes a workspace may hold (ATTACHMENT_QUOTA_BYTES). */
  readonly attachmentQuotaBytes: number;
  /** The Prometheus listener, apart from the API (METRICS_HOST, METRICS_PORT; 0 picks a free port). */
  readonly metricsHost: string;
  readonly metricsPort: number;
  /** APP_ALLOW_INSECURE=1: serve the web app on plain http at a non-loopback APP_URL anyway. */
  readonly appAllowInsecure: boolean;
  /**
   * FLOWPLAN_DEMO: whether a start on an empty database creates the Demo workspace, its admin
   * key and owner, and prints their secrets. Default: yes, except under NODE_ENV=production.
   */
  readonly demo: boolean;
  /** Days the event log keeps events (whole day partitions are dropped after). */
  readonly eventRetentionDays: number;
  /** Bytes a stream subscriber may have waiting to be sent; past it, it is closed and resumes from its cursor. */
  readonly streamMaxBufferedBytes: number;
  /** Event streams (SSE and WebSocket) one credential may hold open on one process at once (STREAMS_PER_CREDENTIAL); past it, 429. */
  readonly streamsPerCredential: number;
  /** Event streams one person may hold open on one process at once, across all their tokens (STREAMS_PER_PERSON); past it, 429. */
  readonly streamsPerPerson: number;
  /** The outbox drain's idle poll (ms), a safety net: every event write wakes the drain at commit. Not from the environment. */
  readonly outboxPollMs: number;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** A size in bytes: a whole number, or with a binary suffix (`64MiB`, `10GiB`). */
function bytes(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)\s*(KiB|MiB|GiB|TiB)?$/.exec(raw.trim());
  const value = match
    ? Number(match[1]) * 1024 ** ['', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(match[2] ?? '')
    : NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new Error(
      `${name} must be a number of bytes of at least ${min} (a suffix KiB, MiB, GiB or TiB may follow), got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    return new URL(raw).toString().replace(/\/$/, '');
  } catch {
    throw new Error(`${name} must be an absolute URL, got ${JSON.stringify(raw)}`);
  }
}

/** `flowplan <notifications@host>` for BASE_URL's host; an IP address becomes `localhost`. */
function defaultMailFrom(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  const domain = /^[\d.]+$|^\[|:/.test(host) ? 'localhost' : host;
  return `flowplan <notifications@${domain}>`;
}

function demoSetting(env: Env): boolean {
  const value = env.FLOWPLAN_DEMO;
  // A production start prints no secret into the logs a container keeps unless asked to.
  if (value === undefined || value === '') return env.NODE_ENV !== 'production';
  if (value !== '0' && value !== '1')
    throw new Error(`FLOWPLAN_DEMO must be 1 or 0, got ${JSON.stringify(value)}`);
  return value === '1';
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const baseUrl = url(env, 'BASE_URL', `http://${host}:${port}`);
  const config: Config = {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    baseUrl,
    appUrl: url(env, 'APP_URL', `${baseUrl}/app`),
    publicUrl: url(env, 'PUBLIC_URL', `${baseUrl}/p`),
    smtpUrl: env.SMTP_URL || undefined,
    workers: int(env, 'WORKERS', Math.max(1, os.availableParallelism() - 1), 1, 256),
    offloadTasks: int(env, 'OFFLOAD_TASKS', 5000, 1, 10_000_000),
    flowSessionsMax: int(env, 'FLOW_SESSIONS_MAX', 1000, 1, 1_000_000),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 240, 1, 1_000_000_000),
    addressRateLimitPerMinute: int(env, 'ADDRESS_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000_000),
    addressRateLimitBurst: int(env, 'ADDRESS_RATE_LIMIT_BURST', 1200, 1, 1_000_000_000),
    failedCredentialsPerMinute: int(env, 'FAILED_CREDENTIALS_PER_MINUTE', 30, 1, 1_000_000),
    failedCredentialsBurst: int(env, 'FAILED_CREDENTIALS_BURST', 60, 1, 1_000_000),
    failedCredentialAddresses: 10_000,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    notifyQuietSeconds: int(env, 'NOTIFY_QUIET_SECONDS', 120, 0, 86_400),
    notifyMaxWaitSeconds: int(env, 'NOTIFY_MAX_WAIT_SECONDS', 900, 0, 86_400),
    notifyRetryBaseSeconds: int(env, 'NOTIFY_RETRY_BASE_SECONDS', 60, 0, 86_400),
    mailFrom: env.MAIL_FROM || defaultMailFrom(baseUrl),
    jobWorkers: env.JOBS !== '0',
    cronCheckSeconds: int(env, 'JOBS_CRON_CHECK_SECONDS', 30, 1, 45),
    webhookAllowPrivate: env.WEBHOOK_ALLOW_PRIVATE === '1',
    webhookRetryBaseSeconds: int(env, 'WEBHOOK_RETRY_BASE_SECONDS', 5, 0, 86_400),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60) * 1000,
    webhookBusyRate: int(env, 'WEBHOOK_BUSY_RATE', 5, 1, 1_000_000),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 128, 1, 10_000),
    webhookWorkspaceInFlight: int(env, 'WEBHOOK_WORKSPACE_IN_FLIGHT', 32, 1, 10_000),
    webhookEndpointInFlight: int(env, 'WEBHOOK_ENDPOINT_IN_FLIGHT', 8, 1, 10_000),
    webhookBreakerTimeouts: int(env, 'WEBHOOK_BREAKER_TIMEOUTS', 5, 1, 1000),
    webhookBreakerCooldownSeconds: int(env, 'WEBHOOK_BREAKER_COOLDOWN_SECONDS', 60, 1, 86_400),
    webhookBreakerTimeoutMs: int(env, 'WEBHOOK_BREAKER_TIMEOUT_SECONDS', 2, 1, 60) * 1000,
    logLevel: env.LOG_LEVEL || 'info',
    dataDir: env.FLOWPLAN_DATA_DIR || '.flowplan',
    maxBodyBytes: 4 * 1024 * 1024,
    maxUploadBytes: 25 * 1024 * 1024,
    maxBufferedBodyBytes: bytes(env, 'MAX_BUFFERED_BODY_BYTES', 64 * 1024 * 1024, 1024 * 1024),
    attachmentQuotaBytes: bytes(env, 'ATTACHMENT_QUOTA_BYTES', 10 * 1024 ** 3, 0),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    // An instance on a free API port (tests, a second local server) takes a free metrics port too.
    metricsPort: int(env, 'METRICS_PORT', (overrides.port ?? port) === 0 ? 0 : 9464, 0, 65535),
    appAllowInsecure: env.APP_ALLOW_INSECURE === '1',
    demo: demoSetting(env),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 7, 1, 3650),
    streamMaxBufferedBytes: bytes(env, 'STREAM_MAX_BUFFERED_BYTES', 256 * 1024, 16 * 1024),
    outboxPollMs: 1000,
    streamsPerCredential: int(env, 'STREAMS_PER_CREDENTIAL', 20, 1, 1_000_000),
    streamsPerPerson: int(env, 'STREAMS_PER_PERSON', 20, 1, 1_000_000),
    ...overrides,
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
