/**
 * Assembles the service from a config: database, migrations, first-start bootstrap,
 * credentials, the edge with every route, and the HTTP listener. main.ts and the tests
 * both start it through here.
 */
import pino, { type Logger } from 'pino';
import { Authenticator } from './auth/authenticate.ts';
import type { Config } from './config.ts';
import { Edge } from './http/edge.ts';
import { Metrics } from './http/metrics.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { listen, UWS_IMPLEMENTATION, UWS_NATIVE, type HttpServer } from './http/server.ts';
import { json, type Route } from './http/route.ts';
import { platformRoutes } from './api/platform.routes.ts';
import type { Services } from './api/services.ts';
import { buildOpenApi } from './schemas/openapi.ts';
import { bootstrapDemo } from './store/bootstrap.ts';
import { openDatabase, type Database } from './store/db.ts';
import { migrate } from './store/migrate.ts';

export interface RunningApp {
  readonly services: Services;
  readonly edge: Edge;
  readonly url: string;
  readonly port: number;
  /** Set when this start created the Demo workspace: its admin key, shown once. */
  readonly demo: { workspaceId: string; key: string } | null;
  /** Graceful: stop accepting, finish in-flight requests, then close the database. */
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: { service: 'flowplan' } });
}

export async function startApp(config: Config, options: { log?: Logger; database?: Database } = {}): Promise<RunningApp> {
  const log = options.log ?? createLogger(config);
  log.info({ implementation: UWS_IMPLEMENTATION, native: UWS_NATIVE }, 'http implementation');
  const database = options.database ?? (await openDatabase(config, (line) => log.debug({ postgres: line })));
  const { sql } = database;
  const applied = await migrate(sql);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  const demo = await bootstrapDemo(sql);

  const auth = new Authenticator(sql);
  await auth.listen();
  const metrics = new Metrics();
  const services: Services = { config, sql, auth, metrics, log };
  const edge = new Edge({
    sql, auth, metrics, log,
    limiter: new RateLimiter(config.rateLimitPerMinute, config.rateLimitBurst),
    maxBodyBytes: config.maxBodyBytes,
  });
  edge.add(platformRoutes(services));
  edge.add([openApiRoute(edge, config)]);

  const server: HttpServer = await listen(edge, config.host, config.port);
  const url = `http://${config.host}:${server.port}`;
  log.info({ url }, 'listening');
  return {
    services, edge, url, port: server.port, demo,
    close: async () => {
      await server.close();
      await auth.close();
      if (!options.database) await database.close();
    },
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
