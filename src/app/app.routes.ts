/** The web app at `{app_url}`: server-rendered pages served by the API's own process (spec §9.3: not part of v1). */
import type { Route } from '../http/route.ts';
import type { Services } from '../api/services.ts';
import { accessRoutes } from './access.routes.ts';
import { appDeps } from './render.ts';
import { signinRoutes } from './signin.routes.ts';

export function appRoutes(services: Services): Route[] {
  const deps = appDeps(services.sql, services.config, services.auth);
  return [...signinRoutes(deps), ...accessRoutes(deps)];
}
