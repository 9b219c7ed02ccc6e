/**
 * The public views under `{public_url}` (CONTRACT §3): for flows and brainstorms, the page,
 * the JSON document, the diagram SVG and the embed. No credential, a budget per client
 * address, and 404 (never 401 or 403) for a token that names nothing published. Replies
 * revalidate by ETag, so an unpublished link is a 404 at the very next request.
 */
import Negotiator from 'negotiator';
import { DomainError } from '../../platform/errors.ts';
import { errorBody, httpStatus } from '../http/error-status.ts';
import { html } from '../../platform/html.ts';
import { page } from '../http/page.ts';
import { route, type Reply, type Route } from '../http/route.ts';
import type { Services } from '../deps.ts';
import {
  PublicBrainstormSchema,
  PublicFlowSchema,
  PublicTokenParams,
} from '../../contract/public.schema.ts';
import { RepresentationCache, type Part } from './representation-cache.ts';

type Kind = 'flows' | 'brainstorms';

const NOUN: Record<Kind, string> = { flows: 'flow', brainstorms: 'brainstorm' };
const CODINGS = ['gzip', 'identity'];

/** `{public_url}`'s path, where these routes are mounted (`/p` by default). */
export const publicPrefix = (publicUrl: string) => new URL(publicUrl).pathname.replace(/\/$/, '');

function refusalTitle(error: DomainError): string {
  return error.code === 'RATE_LIMITED'
    ? 'Too many requests'
    : httpStatus(error) === 404
      ? 'Not published'
      : 'Something went wrong';
}

function refusalText(error: DomainError, kind: Kind): string {
  if (error.code === 'RATE_LIMITED')
    return 'Too many requests from your address. Try again in a minute.';
  if (httpStatus(error) === 404)
    return `This link does not lead to a published ${NOUN[kind]}. It may have been unpublished, or copied incompletely.`;
  return 'The page could not be shown. Try again shortly.';
}

/** A refusal as a page; the embed's stays frameable, so an unpublished embed goes dark in place. */
const errorPage =
  (kind: Kind, embed: boolean) =>
  (error: DomainError): Reply =>
    page({
      title: `${refusalTitle(error)} · flowplan`,
      status: httpStatus(error),
      body: html`<h1>${refusalTitle(error)}</h1><p>${refusalText(error, kind)}</p>`,
      ...(embed ? { chrome: 'minimal' as const, frameAncestors: '*' } : {}),
    });

/** The JSON envelope, never cached (heuristic caching of a 404 would outlive a republish). */
const errorEnvelope = (error: DomainError): Reply => ({
  status: httpStatus(error),
  body: Buffer.from(JSON.stringify(errorBody(error))),
  contentType: 'application/json; charset=utf-8',
  headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
});

export function publicRoutes(
  services: Services,
  cache = new RepresentationCache(services),
): Route[] {
  const prefix = publicPrefix(services.config.publicUrl);
  const find = (kind: Kind, token: string, part: Part) =>
    kind === 'flows' ? cache.flow(token, part) : cache.brainstorm(token, part);

  const publicRoute = (kind: Kind, part: Part): Route => {
    const noun = NOUN[kind];
    const shape = {
      page: {
        path: `${prefix}/${kind}/{token}`,
        what: 'page',
        summary: `The published ${noun} as a web page with its diagram`,
        response: { description: 'HTML page', contentType: 'text/html' },
      },
      json: {
        path: `${prefix}/${kind}/{token}.json`,
        what: 'Json',
        summary: `The published ${noun} as JSON`,
        response: {
          description: `The public ${noun} document`,
          schema: kind === 'flows' ? PublicFlowSchema : PublicBrainstormSchema,
        },
      },
      svg: {
        path: `${prefix}/${kind}/{token}/diagram.svg`,
        what: 'Diagram',
        summary: `The published ${noun}'s diagram as SVG`,
        response: { description: 'SVG image', contentType: 'image/svg+xml' },
      },
      embed: {
        path: `${prefix}/embed/${kind}/{token}`,
        what: 'Embed',
        summary: `The published ${noun} for an <iframe> on another site`,
        response: { description: 'HTML page that may be framed', contentType: 'text/html' },
      },
    }[part];
    const capital = noun[0]!.toUpperCase() + noun.slice(1);
    return route({
      method: 'GET',
      path: shape.path,
      operationId: `getPublic${capital}${part === 'page' ? '' : shape.what}`,
      summary: shape.summary,
      tags: ['Public'],
      auth: 'none',
      rateLimit: 'address',
      params: PublicTokenParams,
      renderError:
        part === 'page' || part === 'embed' ? errorPage(kind, part === 'embed') : errorEnvelope,
      responses: { 200: shape.response },
      handler: async (ctx) => {
        const encoded = await find(kind, ctx.params.token, part);
        if (!encoded) throw new DomainError('NOT_FOUND', `No published ${noun} at this link`);
        // gzip when the client prefers it to identity (RFC 9110 §12.5.3).
        const gzip = new Negotiator({ headers: ctx.headers }).encoding(CODINGS) === 'gzip';
        return encoded[gzip ? 'gzip' : 'identity'];
      },
    });
  };

  return (['flows', 'brainstorms'] as const).flatMap((kind) =>
    (['page', 'json', 'svg', 'embed'] as const).map((part) => publicRoute(kind, part)),
  );
}
