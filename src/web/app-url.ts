/**
 * Where the web app lives: `{app_url}` served by this same process. Its routes are mounted
 * under the URL's path (default `/app`); links and redirects stay relative when the app
 * shares the API's origin, so they work whatever port the server was given.
 */
import type { Config } from '../platform/config.ts';

export function appPrefix(config: Config): string {
  return new URL(config.appUrl).pathname.replace(/\/$/, '');
}

/** The address of an app page for a redirect: a path on the API's origin, else absolute. */
export function appLink(config: Config, path: string): string {
  const app = new URL(config.appUrl);
  const sameOrigin = app.origin === new URL(config.baseUrl).origin;
  return (sameOrigin ? appPrefix(config) : config.appUrl.replace(/\/$/, '')) + path;
}
