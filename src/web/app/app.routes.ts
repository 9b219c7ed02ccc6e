/** The web app at `{app_url}`: server-rendered pages served by the API's own process (spec §9.3: not part of v1). */
import type { Route } from '../http/route.ts';
import type { Services } from '../deps.ts';
import { accessRoutes } from './access.routes.ts';
import { homeRoutes } from './home.routes.ts';
import { appLink } from '../app-url.ts';
import { appDeps, appRoute, seeOther } from './render.ts';
import { signinRoutes } from './signin.routes.ts';
import { flowRoutes } from './flows.routes.ts';

export function appRoutes(services: Services): Route[] {
  const deps = appDeps(services);
  // Someone who opens the base URL in a browser lands in the app (hidden, as every app page is).
  // An app mounted at the root already answers `/` itself.
  const root =
    deps.prefix === ''
      ? []
      : [
          appRoute({
            method: 'GET',
            path: '/',
            operationId: 'root',
            summary: 'The base URL: to the web app',
            handler: () => seeOther(appLink(services.config, '')),
          }),
        ];
  return [
    ...root,
    ...homeRoutes(deps),
    ...flowRoutes(deps),
    ...signinRoutes(deps),
    ...accessRoutes(deps),
  ];
}
