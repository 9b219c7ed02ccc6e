/**
 * Every setting, read once from the environment, validated and frozen; passed down from
 * main.ts (never read process.env anywhere else, so tests can build a config of their own).
 */
import os from 'node:os';
import { parseTrustProxy, type TrustProxy } from './http/client-address.ts';

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
  readonly logLevel: string;
  /** Where embedded Postgres keeps its data when DATABASE_URL is unset. */
  readonly dataDir: string;
  /** Largest JSON body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** Largest attachment upload, in bytes (25 MiB). */
  readonly maxUploadBytes: number;
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
    logLevel: env.LOG_LEVEL || 'info',
    dataDir: env.FLOWPLAN_DATA_DIR || '.flowplan',
    maxBodyBytes: 4 * 1024 * 1024,
    maxUploadBytes: 25 * 1024 * 1024,
    ...overrides,
  };
  return Object.freeze(config);
}
