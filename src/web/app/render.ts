/**
 * What every web-app route shares: the page frame (`page()` with its security headers),
 * See-Other redirects, form bodies, and HTML error pages instead of the JSON envelope.
 */
import {
  notMember,
  noWorkspaceYet,
  wrongMediaType,
  type DomainError,
} from '../../platform/errors.ts';
import { errorHeaders, httpStatus } from '../http/error-status.ts';
import type { Authenticator } from '../../services/auth/authenticate.ts';
import type { WorkIndexes } from '../../services/work/workspace-index.ts';
import type { SessionRegistry } from '../../services/flows/registry.ts';
import type { RecomputePool } from '../../services/flows/recompute-pool.ts';
import type { RenderService } from '../../services/exports/render.service.ts';
import type { Services } from '../deps.ts';
import type { Config } from '../../platform/config.ts';
import type { Html } from '../../platform/html.ts';
import { mediaType } from '../http/input.ts';
import { page } from '../http/page.ts';
import type { TSchema } from '@sinclair/typebox';
import type { Reply, RequestContext, Route, RouteSpec } from '../http/route.ts';
import type { Sql } from '../../platform/database.ts';
import { appPrefix } from '../app-url.ts';
import { cookieNames, visitor, type CookieNames, type Visitor } from './session.ts';
import { workspacesOf } from '../../services/team/members.service.ts';
import type { OrgRow } from '../../services/account/signin.service.ts';
import { messageView } from './signin.views.ts';

export interface AppDeps {
  readonly sql: Sql;
  readonly config: Config;
  readonly auth: Authenticator;
  readonly names: CookieNames;
  /** The app's path prefix (`/app`). */
  readonly prefix: string;
  /** The authorization server's issuer (`iss`, RFC 9207). */
  readonly issuer: string;
  /** The work views' indexes (the home page lists a person's own work). */
  readonly work: WorkIndexes;
  /** The hot flows the flow pages read and act on, as the API does. */
  readonly registry: SessionRegistry;
  /** The recompute pool (a flow page's 80% date). */
  readonly pool: RecomputePool;
  /** The render pool (a flow page's diagram). */
  readonly render: RenderService;
}

export function appDeps(services: Services): AppDeps {
  const { sql, config, auth, work, registry, pool, render } = services;
  return {
    sql,
    config,
    auth,
    work,
    registry,
    pool,
    render,
    names: cookieNames(config),
    prefix: appPrefix(config),
    issuer: config.baseUrl,
  };
}

/**
 * The consent form's answer redirects to the client's loopback redirect URI, and browsers
 * apply `form-action` to a form's redirects too: that page allows the request's own origin.
 * CSP has no syntax for IPv6 hosts, so for `[::1]` the directive is left out instead.
 */
function formTarget(redirectUri: string): { formAction?: string[]; dropFormAction?: boolean } {
  const { origin, hostname } = new URL(redirectUri);
  return hostname.startsWith('[') ? { dropFormAction: true } : { formAction: [origin] };
}

export function view(
  title: string,
  body: Html,
  options: {
    status?: number;
    cookies?: string[];
    formTarget?: string;
    scripts?: string[];
    /** A page that revalidates (`private, no-cache`) by this tag instead of `no-store`. */
    etag?: string;
    head?: Html;
  } = {},
): Reply {
  const target = options.formTarget ? formTarget(options.formTarget) : {};
  const reply = page({
    title: `${title} · flowplan`,
    body,
    status: options.status ?? 200,
    cookies: options.cookies,
    ...(target.formAction ? { formAction: target.formAction } : {}),
    ...(options.scripts ? { scripts: options.scripts } : {}),
    ...(options.head ? { head: options.head } : {}),
    ...(options.etag !== undefined
      ? { etag: options.etag, cacheControl: 'private, no-cache' }
      : {}),
  });
  if (!target.dropFormAction) return reply;
  const csp = reply
    .headers!['Content-Security-Policy']!.split('; ')
    .filter((d) => !d.startsWith('form-action'))
    .join('; ');
  return { ...reply, headers: { ...reply.headers, 'Content-Security-Policy': csp } };
}

/** A visitor with a live session. */
export type SignedInVisitor = Visitor & { session: NonNullable<Visitor['session']> };

/** The signed-in visitor and their workspaces, none for a guest who belongs to none; null when a sign-in is needed. */
export async function signedInPerson(
  deps: AppDeps,
  headers: RequestContext['headers'],
): Promise<{ v: SignedInVisitor; orgs: OrgRow[] } | null> {
  const v = await visitor(deps.sql, deps.names, headers);
  if (!v.session) return null;
  return { v: v as SignedInVisitor, orgs: await workspacesOf(deps.sql, v.session.userId) };
}

/**
 * The signed-in visitor, their workspaces and the one a page is about: `asked` when given (an
 * email's link names its workspace; not one of theirs: 404), else the session's. Null when a
 * sign-in is needed.
 */
export async function signedIn(
  deps: AppDeps,
  headers: RequestContext['headers'],
  asked = '',
): Promise<{ v: SignedInVisitor; orgs: OrgRow[]; workspace: OrgRow } | null> {
  const person = await signedInPerson(deps, headers);
  if (!person) return null;
  const workspace = chosenWorkspace(person, asked);
  if (asked && !workspace) throw notMember();
  if (!workspace) throw noWorkspaceYet();
  return { ...person, workspace };
}

/** The workspace a page is about: `asked` if one of theirs, else the session's, else their first; none for a guest of no workspace. */
export function chosenWorkspace(
  person: { v: SignedInVisitor; orgs: readonly OrgRow[] },
  asked = '',
): OrgRow | undefined {
  const { v, orgs } = person;
  return asked
    ? orgs.find((org) => org.id === asked)
    : (orgs.find((org) => org.id === v.session.workspaceId) ?? orgs[0]);
}

/**
 * A path of an app page, safe to go on to after sign-in: under the app's prefix, on this
 * origin (never `//host` or a backslash a browser reads as one), no control characters.
 */
export function isAppPath(prefix: string, path: string): boolean {
  return (
    path.startsWith(`${prefix}/`) &&
    !path.startsWith('//') &&
    !/[\\\u0000-\u001f\u007f]/.test(path) &&
    path.length <= 2048
  );
}

/** The sign-in page, coming back to `path` (a page asked for while signed out) after. */
export function signinFirst(prefix: string, path: string): Reply {
  return seeOther(`${prefix}/signin?next=${encodeURIComponent(path)}`);
}

/**
 * A See Other to `location`, which goes out as visible ASCII alone: anything else in it (text
 * beyond ASCII a `next` carried, a space) is percent-encoded as UTF-8, as a browser sends it. A
 * header is no place for more (node:http throws on a character beyond Latin-1; the edge answers
 * 500 to any header with a control character or a byte beyond ASCII).
 */
export function seeOther(location: string, cookies: string[] = []): Reply {
  return {
    status: 303,
    headers: { Location: asciiUrl(location), 'Cache-Control': 'no-store' },
    cookies,
  };
}

// Well-formed first: half a surrogate pair makes encodeURIComponent throw.
const asciiUrl = (url: string) =>
  url.toWellFormed().replace(/[^\x21-\x7e]+/g, (run) => encodeURIComponent(run));

/** A refusal as a page, for every app route. */
export function errorPage(error: DomainError): Reply {
  const status = httpStatus(error);
  const title =
    status === 404
      ? 'Not found'
      : status === 429
        ? 'Too many attempts'
        : status >= 500
          ? 'Something went wrong'
          : 'That did not work';
  // The base URL leads into the app wherever it is mounted: a way home from any page.
  const home = { href: '/', text: 'Go to your home page' };
  const reply = view(title, messageView(title, error.message, home), { status });
  return { ...reply, headers: { ...reply.headers, ...errorHeaders(error) } };
}

/** Form fields of a urlencoded body; repeated names (checkboxes) keep every value. */
export function formFields(
  ctx: Pick<RequestContext, 'headers' | 'rawBody'>,
): Map<string, string[]> {
  if (mediaType(ctx.headers['content-type']) !== 'application/x-www-form-urlencoded')
    throw wrongMediaType('application/x-www-form-urlencoded');
  const fields = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(ctx.rawBody.toString('utf8')))
    fields.set(name, [...(fields.get(name) ?? []), value]);
  return fields;
}

export const field = (fields: Map<string, string[]>, name: string): string =>
  fields.get(name)?.[0] ?? '';

/** Form posts are small; a larger body (a 1 MB password) is refused before anything reads it. */
export const FORM_BYTES = 16 * 1024;

/** What an app route states itself; appRoute adds the rest. */
type AppFixed =
  'auth' | 'hidden' | 'rateLimit' | 'renderError' | 'tags' | 'responses' | 'bodyKind' | 'body';

/**
 * The common fields of an app route: hidden from the OpenAPI document, a budget per address,
 * HTML refusals, no credential (the session cookie is the page's business). As `route()`,
 * its handler's `ctx.params` and `ctx.query` are typed from the schemas it gives.
 */
export function appRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
>(
  spec: Omit<RouteSpec<P, Q, undefined, undefined, 'none'>, AppFixed> & {
    responses?: Route['responses'];
  },
): Route;
export function appRoute(route: Omit<Route, AppFixed> & { responses?: Route['responses'] }): Route {
  const post = route.method === 'POST';
  return {
    auth: 'none',
    hidden: true,
    rateLimit: 'address',
    renderError: errorPage,
    tags: ['App'],
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    ...(post ? { bodyKind: 'bytes' as const, maxBodyBytes: FORM_BYTES } : {}),
    ...route,
  };
}
