/**
 * Assembles the service from a config: database, migrations, first-start bootstrap,
 * credentials, the edge with every route, and the HTTP listener. main.ts and the tests
 * both start it through here.
 */
import pino, { type Logger } from 'pino';
import { Histogram } from 'prom-client';
import { Authenticator } from './services/auth/authenticate.ts';
import type { Config } from './platform/config.ts';
import { Edge } from './web/http/edge.ts';
import { Metrics } from './web/http/metrics.ts';
import { Mailer } from './services/mail/mailer.ts';
import { Jobs } from './services/jobs/jobs.ts';
import { Notifications } from './services/notifications/notifications.ts';
import { notificationRoutes } from './web/api/notifications.routes.ts';
import { exportRoutes } from './web/api/exports.routes.ts';
import { RenderService } from './services/exports/render.service.ts';
import { webhookRoutes } from './web/api/webhooks.routes.ts';
import { WebhookDeliveries } from './services/webhooks/delivery.job.ts';
import { Webhooks } from './services/webhooks/webhooks.service.ts';
import { RateLimiter } from './web/http/rate-limit.ts';
import { SharedRateLimiter } from './web/http/shared-rate-limit.ts';
import { Foreground } from './web/http/foreground.ts';
import { listenMetrics } from './web/http/metrics-server.ts';
import { Files } from './services/files/files.service.ts';
import { listen, NativeUwsUnavailable, UWS_IMPLEMENTATION, UWS_NATIVE, type HttpServer } from './web/http/server.ts';
import { json, type Route } from './web/http/route.ts';
import { assetRoutes } from './web/http/page.ts';
import { publicRoutes } from './web/public/public.routes.ts';
import { flowRoutes } from './web/api/flows.routes.ts';
import { platformRoutes } from './web/api/platform.routes.ts';
import { searchRoutes } from './web/api/search.routes.ts';
import { shareRoutes } from './web/api/shares.routes.ts';
import { teamRoutes } from './web/api/team.routes.ts';
import { templateRoutes } from './web/api/templates.routes.ts';
import { workRoutes } from './web/api/work.routes.ts';
import { appRoutes } from './web/app/app.routes.ts';
import { brainstormRoutes } from './web/api/brainstorms.routes.ts';
import { WorkIndexes } from './services/work/workspace-index.ts';
import { taskRoutes } from './web/api/tasks.routes.ts';
import { recomputeStrategy } from './services/flows/offload.ts';
import { RecomputePool } from './services/flows/recompute-pool.ts';
import { SessionRegistry } from './services/flows/registry.ts';
import { flowJsonStats } from './services/flows/flow-body.ts';
import type { Services } from './web/api/services.ts';
import { buildOpenApi } from './web/schemas/openapi.ts';
import { bootstrapDemo, type Demo } from './storage/bootstrap.ts';
import { connectionsInUse, openDatabase, type Database } from './storage/db.ts';
import { migrate } from './storage/migrate.ts';
import { syncTemplates } from './storage/templates.store.ts';

export interface RunningApp {
  readonly services: Services;
  readonly edge: Edge;
  readonly url: string;
  readonly port: number;
  /** Where Prometheus scrapes: `http://METRICS_HOST:METRICS_PORT/metrics`. */
  readonly metricsUrl: string;
  /** Where the web app is (APP_URL; on a free port, with the port taken). */
  readonly appUrl: string;
  /** Set when this start created the Demo workspace: its admin key and owner's password, shown once. */
  readonly demo: Demo | null;
  /** Graceful: stop accepting, finish in-flight requests, then close the database. */
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: { service: 'flowplan' } });
}

/** Heap per task of a hot session, measured by bench:flow-ops (11.1 MB for 10,000 tasks, 88 MB for 100,000). */
const SESSION_BYTES_PER_TASK = 1_100;

export interface StartOptions {
  log?: Logger;
  database?: Database;
  /** Test hook: every render fails in its worker (RENDER_FAILED). Only tests pass it; no setting reaches it. */
  failRenders?: boolean;
  /** Test hook: the recompute pool runs this worker module (one that fails on cue) with this timeout. */
  recomputeWorker?: { url: URL; timeoutMs: number };
  /**
   * Test hook: the recompute workers start on first use instead of at boot (about 0.3-1 s of
   * CPU per start under tsx, which most test servers, never offloading a flow, do not need).
   */
  coldRecomputePool?: boolean;
  /**
   * Test hook: the first start creates the Demo workspace and key but no demo person (its
   * password hash at the floor costs 1-2 s of CPU, and test servers sign in people of their own).
   */
  skipDemoPerson?: boolean;
}

export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningApp> {
  const log = options.log ?? createLogger(config);
  if (!UWS_NATIVE) {
    log.warn({ implementation: UWS_IMPLEMENTATION, native: false, node: process.versions.node, abi: process.versions.modules }, 'http implementation');
    throw new NativeUwsUnavailable();
  }
  log.info({ implementation: UWS_IMPLEMENTATION, native: true }, 'http implementation');
  const database = options.database ?? (await openDatabase(config, (line) => log.debug({ postgres: line })));
  const { sql } = database;
  const applied = await migrate(sql);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  await syncTemplates(sql);
  // On a first start the demo person's password hash (1-2 s, on libuv's threadpool) runs
  // while the rest starts; awaited before listening.
  const demoCreated = bootstrapDemo(sql, { person: !options.skipDemoPerson });
  demoCreated.catch(() => {}); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled

  const auth = new Authenticator(sql);
  await auth.listen();
  const metrics = new Metrics();
  // The bound on work in flight answers 503 under overload rather than queueing without end.
  const pool = new RecomputePool({
    threads: config.workers, timeoutMs: options.recomputeWorker?.timeoutMs ?? 30_000, maxInFlight: config.workers * 16, log,
    ...(options.recomputeWorker ? { worker: options.recomputeWorker.url } : {}),
  });
  // Started (and warmed) while the rest starts, so no request pays for a worker's start-up.
  const poolStarted = options.coldRecomputePool ? null : pool.start();
  poolStarted?.catch(() => {}); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled
  const recomputeSeconds = new Histogram({
    name: 'flowplan_recompute_duration_seconds',
    help: 'Flow derivation time by where: a whole flow in this thread or offloaded to the pool, or incremental (a change derived from the version before, in this thread); its count is the number of derivations',
    labelNames: ['where'] as const, buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [metrics.registry],
  });
  const registry = new SessionRegistry(sql, recomputeStrategy(pool, config.offloadTasks, recomputeSeconds), config.publicUrl, config.flowSessionsMax);
  await registry.listen();
  metrics.gauge('flowplan_flow_sessions', 'Hot flow sessions held in memory', () => registry.size);
  metrics.gaugeByLabels(
    'flowplan_postgres_connections',
    'Connections of every flowplan process to the database, by pool (flowplan: requests, at most 10 per process; flowplan-jobs: pg-boss, 4) and state (active: running a query)',
    ['pool', 'state'],
    async () => (await connectionsInUse(sql)).map(({ pool, state, count }) => ({ labels: { pool, state }, value: count })),
  );
  metrics.gauge('flowplan_flow_session_tasks', 'Tasks held in hot flow sessions (what their memory grows with)', () => registry.tasksHeld());
  metrics.gauge('flowplan_flow_session_heap_bytes_estimate', 'Heap the hot sessions hold, estimated from their tasks (bench:flow-ops measured 11.1 MB for one 10k-task session: about 1.1 KB a task)', () => registry.tasksHeld() * SESSION_BYTES_PER_TASK);
  metrics.total('flowplan_flow_session_loads_total', 'Flows loaded from Postgres into a session', () => registry.loads);
  metrics.total('flowplan_flow_json_task_bytes_total', 'Bytes of task JSON serialized for Flow bodies (a task whose fields did not change reuses its bytes from the version before)', () => flowJsonStats.taskBytes);
  metrics.total('flowplan_flow_session_evictions_total', 'Hot sessions dropped to stay within FLOW_SESSIONS_MAX', () => registry.evictions);
  metrics.gauge('flowplan_pool_threads', 'Recompute worker threads running (started at boot; a failed one is replaced)', () => pool.stats().threads);
  metrics.gauge('flowplan_pool_utilization', 'Recompute pool utilisation (0–1)', () => pool.stats().utilization);
  metrics.gauge('flowplan_pool_queue_depth', 'Recomputes waiting for a worker', () => pool.stats().queueSize);
  metrics.gauge('flowplan_pool_in_flight', 'Recomputes pending on the pool', () => pool.stats().inFlight);
  metrics.gauge('flowplan_pool_failed_runs', 'Recomputes whose worker crashed or timed out since start (each answered 503; the worker was replaced)', () => pool.stats().failed);
  const mailer = new Mailer(config, log);
  const render = new RenderService({ threads: config.workers, timeoutMs: 60_000, maxInFlight: config.workers * 8, log, failRenders: options.failRenders });
  const jobs = new Jobs(database.url, sql, log, metrics, config.jobWorkers, config.cronCheckSeconds);
  const notifications = new Notifications({ sql, registry, jobs, mailer, config, log });
  // Requests in flight: webhook delivery keeps out of their way.
  const foreground = new Foreground();
  const webhookDeliveries = new WebhookDeliveries(sql, jobs, config, log, metrics, foreground);
  const webhooks = new Webhooks(sql, webhookDeliveries, config);
  const files = new Files(sql, config.attachmentQuotaBytes, jobs, log);
  metrics.total('flowplan_attachment_quota_refusals_total', 'Uploads refused because the workspace had no room left in ATTACHMENT_QUOTA_BYTES', () => files.refusals);
  metrics.gaugeByLabels(
    'flowplan_workspace_file_bytes',
    'Stored file bytes (attachments and idea files) of the 20 workspaces storing the most, against ATTACHMENT_QUOTA_BYTES',
    ['workspace'],
    async () => (await files.largest(20)).map(({ workspaceId, bytes }) => ({ labels: { workspace: workspaceId }, value: bytes })),
  );
  metrics.gauge('flowplan_attachment_quota_bytes', 'ATTACHMENT_QUOTA_BYTES: stored file bytes a workspace may hold', () => files.quotaBytes);
  const services: Services = { config, sql, auth, metrics, log, registry, work: new WorkIndexes(sql, registry, metrics.histogram('flowplan_work_index_build_seconds', 'Work index builds and refreshes of a workspace and their time', [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5])), mailer, jobs, notifications, webhooks, render, files };
  metrics.total('flowplan_work_index_rebuilds_total', 'Work indexes built whole: a workspace\'s first poll, or after LISTEN was restored (a write refreshes one flow)', () => services.work.rebuilds);
  metrics.total('flowplan_work_index_flow_ranks_total', 'Flows ranked for the work views: once per flow version a poll needed', () => services.work.flowRanks);
  const limiter = new SharedRateLimiter(sql, config.rateLimitPerMinute, config.rateLimitBurst, log);
  const failedCredentialLimiter = new RateLimiter(config.failedCredentialsPerMinute, config.failedCredentialsBurst, Date.now, config.failedCredentialAddresses);
  metrics.gauge('flowplan_failed_credential_budgets', `Client addresses (IPv6 by /64) with a budget of failed credential checks held in memory (at most ${config.failedCredentialAddresses})`, () => failedCredentialLimiter.size);
  const edge = new Edge({
    sql, auth, metrics, log,
    limiter,
    addressLimiter: new RateLimiter(config.addressRateLimitPerMinute, config.addressRateLimitBurst),
    failedCredentialLimiter,
    maxBodyBytes: config.maxBodyBytes,
    uploads: files,
  });
  edge.add(platformRoutes(services));
  edge.add(flowRoutes(services));
  edge.add(taskRoutes(services));
  edge.add(teamRoutes(services));
  edge.add(shareRoutes(services));
  edge.add(templateRoutes(services));
  edge.add(searchRoutes(services));
  edge.add(workRoutes(services));
  edge.add(appRoutes(services));
  edge.add(assetRoutes);
  edge.add(publicRoutes(services));
  edge.add(brainstormRoutes(services));
  edge.add(notificationRoutes(services));
  edge.add(exportRoutes(services));
  edge.add(webhookRoutes(services));
  edge.add([openApiRoute(edge, config)]);

  // Workers and outbox subscribers are registered above (route modules, services); start them.
  await jobs.start();
  const stopWebhooks = await webhookDeliveries.start();
  if (poolStarted) log.info(await poolStarted, 'recompute workers started');
  const demo = await demoCreated;
  const metricsServer = await listenMetrics(metrics, config.metricsHost, config.metricsPort);
  const server: HttpServer = await listen(edge, config.host, config.port, {
    foreground, trustProxy: config.trustProxy, maxBufferedBytes: config.maxBufferedBodyBytes,
  }).catch(async (error: unknown) => {
    await metricsServer.close();
    throw error;
  });
  const url = `http://${config.host}:${server.port}`;
  const appUrl = new URL(config.appUrl);
  if (appUrl.port === '0') appUrl.port = String(server.port);
  log.info({ url, metrics: metricsServer.url }, 'listening');
  let closed: Promise<void> | null = null;
  return {
    services, edge, url, port: server.port, metricsUrl: metricsServer.url, appUrl: appUrl.toString().replace(/\/$/, ''), demo,
    // Once: a second call waits for the first.
    close: () => closed ??= (async () => {
      await server.close();
      await metricsServer.close();
      await stopWebhooks();
      await jobs.stop();
      await limiter.close();
      await registry.close();
      await pool.close();
      await render.close();
      await auth.close();
      mailer.close();
      if (!options.database) await database.close();
    })(),
  };
}

function openApiRoute(edge: Edge, config: Config): Route {
  let document: Record<string, unknown> | null = null;
  return {
    method: 'GET', path: '/v1/openapi.json', operationId: 'getOpenApi', summary: 'This OpenAPI 3.1 document',
    tags: ['Operations'], auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1.0 document', schema: { type: 'object' } } },
    handler: () => json(200, (document ??= buildOpenApi(edge.router.routes, config.baseUrl))),
  };
}
