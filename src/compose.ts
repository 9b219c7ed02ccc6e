/**
 * Assembles the service from a config: database, migrations, first-start bootstrap,
 * credentials, the edge with every route, and the HTTP listener. main.ts and the tests
 * both start it through here.
 */
import type { Logger } from 'pino';
import { createLogger } from './platform/logging.ts';
import { Authenticator } from './services/auth/authenticate.ts';
import type { Config } from './platform/config.ts';
import { Edge } from './web/http/edge.ts';
import { IdempotencyKeys } from './services/idempotency/idempotency.service.ts';
import { Metrics } from './platform/metrics.ts';
import { Mailer } from './services/mail/mailer.ts';
import { Jobs } from './services/jobs/jobs.ts';
import { Notifications } from './services/notifications/notifications.ts';
import { notificationRoutes } from './web/api/notifications.routes.ts';
import { exportRoutes } from './web/api/exports.routes.ts';
import { RenderService } from './services/exports/render.service.ts';
import { webhookRoutes } from './web/api/webhooks.routes.ts';
import { WebhookDeliveries } from './services/webhooks/delivery.job.ts';
import { DeliveryIds } from './services/webhooks/message.ts';
import { RateLimiter } from './services/limits/rate-limit.ts';
import { fillSeconds, SharedRateLimiter } from './services/limits/shared-rate-limit.ts';
import { Foreground } from './platform/foreground.ts';
import { listenMetrics } from './web/http/metrics-server.ts';
import { Files } from './services/files/files.service.ts';
import type { HttpServer } from './web/http/listener.ts';
import { openTransport, type Transport } from './web/http/transport.ts';
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
import { errorPage } from './web/app/render.ts';
import { appPrefix } from './web/app-url.ts';
import { brainstormRoutes } from './web/api/brainstorms.routes.ts';
import { WorkIndexes } from './services/work/workspace-index.ts';
import { taskRoutes } from './web/api/tasks.routes.ts';
import { planRoutes } from './web/api/plan.routes.ts';
import { baselineRoutes } from './web/api/baselines.routes.ts';
import { eventRoutes, eventSocket, STREAM_PATH } from './web/api/events.routes.ts';
import { EventHub } from './services/events/hub.ts';
import { EventLogRetention } from './services/events/retention.ts';
import { recomputeStrategy } from './services/flows/offload.ts';
import { RecomputePool } from './services/flows/recompute-pool.ts';
import { SessionRegistry } from './services/flows/registry.ts';
import type { Services } from './web/deps.ts';
import { buildOpenApi } from './web/schemas/openapi.ts';
import { bootstrapDemo, type Demo } from './services/auth/bootstrap.ts';
import { openDatabase, registerConnectionMetrics, type Database } from './storage/db.ts';
import { claimDataDir } from './storage/embedded.ts';
import { anyWorkspace } from './storage/workspaces.store.ts';
import { migrate } from './storage/migrate.ts';
import { syncCatalogue } from './services/templates/templates.service.ts';

export interface RunningApp {
  readonly services: Services;
  readonly edge: Edge;
  readonly url: string;
  readonly port: number;
  /** Which transport serves HTTP: uWebSockets.js, or node:http where no uWS build loads. */
  readonly transport: Transport['name'];
  /** Where Prometheus scrapes: `http://METRICS_HOST:METRICS_PORT/metrics`. */
  readonly metricsUrl: string;
  /** Where the web app is (APP_URL; on a free port, with the port taken). */
  readonly appUrl: string;
  /** Set when this start created the Demo workspace: its admin key and owner's password, shown once. */
  readonly demo: Demo | null;
  /** The database has no workspace (a start with FLOWPLAN_DEMO=0 makes none). */
  readonly noWorkspace: boolean;
  /** Graceful: stop accepting, finish in-flight requests, then close the database. */
  close(): Promise<void>;
}

/** A start refused for a reason the operator can act on (a port in use), said in one line. */
export class StartRefused extends Error {}

export interface StartOptions {
  log?: Logger;
  database?: Database;
  /** Test hook: every render fails in its worker (RENDER_FAILED). Only tests pass it; no setting reaches it. */
  failRenders?: boolean;
  /** Test hook: every render waits this long in its worker first (a slow export). Only tests pass it. */
  renderDelayMs?: number;
  /** Test hook: the recompute pool runs this worker module (one that fails on cue; the usual one when absent) with this timeout. */
  recomputeWorker?: { url?: URL; timeoutMs: number };
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
  const transport = await openTransport(config.httpTransport);
  // One line: the transport, and where uWS cannot load, why in this system's terms.
  if (transport.fallbackReason)
    log.warn(
      { transport: transport.name, node: process.versions.node, reason: transport.fallbackReason },
      `http transport: serving on node:http, since uWebSockets.js cannot load here: ${transport.fallbackReason}`,
    );
  else
    log.info(
      { transport: transport.name },
      `http transport: ${transport.name === 'uws' ? 'uWebSockets.js' : 'node:http (HTTP_TRANSPORT=node)'}`,
    );
  // Each step that starts something says how to stop it: a start that fails part-way stops, in
  // reverse, what it had started (an embedded Postgres above all), instead of leaving it running.
  const undo: (() => unknown)[] = [];
  try {
    return await assemble(config, options, log, undo, transport);
  } catch (error) {
    for (const step of undo.reverse()) {
      await Promise.resolve()
        .then(step)
        .catch((cause: unknown) => log.warn({ err: cause }, 'stopping after a failed start'));
    }
    throw error;
  }
}

async function assemble(
  config: Config,
  options: StartOptions,
  log: Logger,
  undo: (() => unknown)[],
  transport: Transport,
): Promise<RunningApp> {
  // The embedded cluster is stopped by the server that started it: one server per data directory.
  const releaseDataDir =
    options.database || config.databaseUrl ? null : claimDataDir(config.dataDir);
  if (releaseDataDir) undo.push(releaseDataDir);
  const database =
    options.database ?? (await openDatabase(config, (line) => log.debug({ postgres: line })));
  if (!options.database) undo.push(() => database.close());
  const { sql } = database;
  const applied = await migrate(sql);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  await syncCatalogue(sql);
  // On a first start the demo person's password hash (1-2 s, on libuv's threadpool) runs
  // while the rest starts; awaited before listening.
  const demoCreated = config.demo
    ? bootstrapDemo(sql, { person: !options.skipDemoPerson })
    : Promise.resolve(null);
  demoCreated.catch(() => {}); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled

  const auth = new Authenticator(sql);
  undo.push(() => auth.close());
  await auth.listen();
  const metrics = new Metrics();
  // The bound on work in flight answers 503 under overload rather than queueing without end.
  const pool = new RecomputePool({
    threads: config.workers,
    timeoutMs: options.recomputeWorker?.timeoutMs ?? 30_000,
    maxInFlight: config.workers * 16,
    // Large what-ifs' and batches' lists take seconds: a lane of their own, half as many threads
    // (one at least), so forecasts and recomputes never wait behind them.
    commands: { threads: Math.max(1, Math.floor(config.workers / 2)), timeoutMs: 120_000 },
    log,
    ...(options.recomputeWorker?.url ? { worker: options.recomputeWorker.url } : {}),
  });
  undo.push(() => pool.close());
  // Started (and warmed) while the rest starts, so no request pays for a worker's start-up.
  const poolStarted = options.coldRecomputePool ? null : pool.start();
  poolStarted?.catch(() => {}); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled
  const registry = new SessionRegistry(
    sql,
    recomputeStrategy(pool, config.offloadTasks, metrics),
    config.publicUrl,
    config.flowSessionsMax,
  );
  undo.push(() => registry.close());
  await registry.listen();
  registry.registerMetrics(metrics);
  pool.registerMetrics(metrics);
  registerConnectionMetrics(metrics, sql);
  const mailer = new Mailer(config, log);
  undo.push(() => mailer.close());
  const render = new RenderService({
    threads: config.workers,
    timeoutMs: 60_000,
    maxInFlight: config.workers * 8,
    log,
    failRenders: options.failRenders,
    renderDelayMs: options.renderDelayMs,
  });
  undo.push(() => render.close());
  const jobs = new Jobs(
    database.url,
    sql,
    log,
    metrics,
    config.jobWorkers,
    config.cronCheckSeconds,
    config.outboxPollMs,
  );
  const notifications = new Notifications({ sql, registry, jobs, mailer, config, log });
  // Requests in flight: webhook delivery keeps out of their way.
  const foreground = new Foreground();
  const webhookDeliveries = new WebhookDeliveries(
    sql,
    jobs,
    config,
    log,
    metrics,
    await DeliveryIds.load(sql),
    foreground,
  );
  const webhooks = { sql, deliveries: webhookDeliveries, config };
  const files = new Files(sql, config.attachmentQuotaBytes, jobs, log);
  files.registerMetrics(metrics);
  const work = new WorkIndexes(sql, registry);
  work.registerMetrics(metrics);
  const retention = new EventLogRetention(sql, config.eventRetentionDays, log);
  retention.schedule(jobs);
  await retention.prepare();
  const events = new EventHub(sql, auth, log, metrics, config, foreground);
  const services: Services = {
    config,
    sql,
    auth,
    metrics,
    log,
    registry,
    pool,
    work,
    mailer,
    jobs,
    notifications,
    webhooks,
    render,
    files,
    events,
  };
  // Both keep their buckets in rate_buckets: an idle row is forgotten once either would be full.
  const forgetAfter = Math.max(
    fillSeconds(config.rateLimitPerMinute, config.rateLimitBurst),
    fillSeconds(config.workspaceBudgetPerMinute, config.workspaceBudgetBurst),
  );
  const limiter = new SharedRateLimiter(
    sql,
    config.rateLimitPerMinute,
    config.rateLimitBurst,
    log,
    forgetAfter,
  );
  undo.push(() => limiter.close());
  const workspaceLimiter = new SharedRateLimiter(
    sql,
    config.workspaceBudgetPerMinute,
    config.workspaceBudgetBurst,
    log,
    forgetAfter,
  );
  undo.push(() => workspaceLimiter.close());
  const failedCredentialLimiter = new RateLimiter(
    config.failedCredentialsPerMinute,
    config.failedCredentialsBurst,
    Date.now,
    config.failedCredentialAddresses,
  );
  const edge = new Edge({
    auth,
    metrics,
    log,
    idempotencyKeys: new IdempotencyKeys(sql),
    limiter,
    workspaceLimiter,
    addressLimiter: new RateLimiter(config.addressRateLimitPerMinute, config.addressRateLimitBurst),
    failedCredentialLimiter,
    maxBodyBytes: config.maxBodyBytes,
    uploads: files,
  });
  edge.add(platformRoutes(services));
  edge.add(flowRoutes(services));
  edge.add(taskRoutes(services));
  edge.add(planRoutes(services));
  edge.add(baselineRoutes(services));
  edge.add(teamRoutes(services));
  edge.add(shareRoutes(services));
  edge.add(templateRoutes(services));
  edge.add(searchRoutes(services));
  edge.add(workRoutes(services));
  edge.add(appRoutes(services));
  edge.pagesUnder(appPrefix(config), errorPage);
  edge.add(assetRoutes);
  edge.add(publicRoutes(services));
  edge.add(brainstormRoutes(services));
  edge.add(notificationRoutes(services));
  edge.add(exportRoutes(services));
  edge.add(webhookRoutes(services));
  edge.add(eventRoutes(services));
  edge.add([openApiRoute(edge, config)]);

  // Workers and outbox subscribers are registered above (route modules, services); start them.
  undo.push(() => jobs.stop());
  await jobs.start();
  const stopWebhooks = await webhookDeliveries.start();
  undo.push(stopWebhooks);
  undo.push(() => events.stop());
  await events.start();
  if (poolStarted) log.info(await poolStarted, 'recompute workers started');
  const demo = await demoCreated;
  const noWorkspace = !demo && !(await anyWorkspace(sql));
  const metricsServer = await listenMetrics(metrics, config.metricsHost, config.metricsPort).catch(
    (error: Error) => {
      throw new StartRefused(error.message);
    },
  );
  undo.push(() => metricsServer.close());
  const server: HttpServer = await transport.listen(edge, config.host, config.port, {
    foreground,
    trustProxy: config.trustProxy,
    maxBufferedBytes: config.maxBufferedBodyBytes,
    sockets: { [STREAM_PATH]: eventSocket(edge, events, services) },
  });
  const url = `http://${config.host}:${server.port}`;
  const appUrl = new URL(config.appUrl);
  if (appUrl.port === '0') appUrl.port = String(server.port);
  log.info({ url, metrics: metricsServer.url }, 'listening');
  let closed: Promise<void> | null = null;
  return {
    services,
    edge,
    url,
    port: server.port,
    transport: transport.name,
    metricsUrl: metricsServer.url,
    appUrl: appUrl.toString().replace(/\/$/, ''),
    demo,
    noWorkspace,
    // Once: a second call waits for the first.
    close: () =>
      (closed ??= (async () => {
        // Streams and long polls end first (streams told to resume elsewhere), or they would hold the close.
        await events.stop();
        await server.close();
        await metricsServer.close();
        await stopWebhooks();
        await jobs.stop();
        await limiter.close();
        await workspaceLimiter.close();
        await registry.close();
        await pool.close();
        await render.close();
        await auth.close();
        mailer.close();
        if (!options.database) await database.close();
        releaseDataDir?.();
      })()),
  };
}

function openApiRoute(edge: Edge, config: Config): Route {
  let document: Record<string, unknown> | null = null;
  return {
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This OpenAPI 3.1 document',
    tags: ['Operations'],
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1.0 document', schema: { type: 'object' } } },
    handler: () => json(200, (document ??= buildOpenApi(edge.router.routes, config.baseUrl))),
  };
}
