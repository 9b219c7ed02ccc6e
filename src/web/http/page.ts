/**
 * The one HTML page frame every server-rendered page uses (public views, the web app, the
 * unsubscribe pages): a skip link, landmarks, the stylesheet, and the security headers.
 * The CSP allows nothing inline, so markup injected through user text could not run or
 * style anything even if it escaped the `html` tag; `frame-ancestors` is `'none'` unless a
 * page (an embed) says otherwise.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { html, type Html } from '../../platform/html.ts';
import type { Reply, Route } from './route.ts';

const STYLESHEET = readFileSync(new URL('./assets/flowplan.css', import.meta.url));
const STYLESHEET_TAG = hash('sha1', STYLESHEET, 'base64url');
/** The version in the query string lets browsers cache the file and still see a new one at once. */
export const STYLESHEET_PATH = `/assets/flowplan.css?v=${STYLESHEET_TAG}`;

export interface PageInput {
  /** The document's title (also its accessible name). */
  title: string;
  /** The content of `<main>`. */
  body: Html;
  status?: number;
  /** CSP `frame-ancestors`: `'none'` unless given (`*` for embeds). */
  frameAncestors?: string;
  /** `minimal`: no header, footer or skip link (an embed inside someone else's page). */
  chrome?: 'full' | 'minimal';
  /** Defaults to `no-store`; a public view that revalidates gives `no-cache` and an `etag`. */
  cacheControl?: string;
  etag?: string;
  /** Same-origin scripts the page loads (`defer`); the CSP then allows `script-src 'self'`. */
  scripts?: readonly string[];
  /** Extra `form-action` sources beyond `'self'` (the consent form's loopback redirect). */
  formAction?: readonly string[];
  /** Extra content for `<head>` written by this program (a `<link rel="alternate">`). */
  head?: Html;
  headers?: Record<string, string>;
  cookies?: string[];
}

export function contentSecurityPolicy(input: Pick<PageInput, 'frameAncestors' | 'scripts' | 'formAction'>): string {
  return [
    "default-src 'none'",
    input.scripts?.length ? "script-src 'self'" : null,
    "style-src 'self'",
    "img-src 'self' data:",
    ['form-action', "'self'", ...(input.formAction ?? [])].join(' '),
    `frame-ancestors ${input.frameAncestors ?? "'none'"}`,
    "base-uri 'none'",
  ].filter((d) => d !== null).join('; ');
}

export function page(input: PageInput): Reply {
  const full = (input.chrome ?? 'full') === 'full';
  const markup = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${input.title}</title><link rel="stylesheet" href="${STYLESHEET_PATH}">${input.head}${(input.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}</head>
<body class="${full ? 'fp-page' : 'fp-page fp-embed'}">${full ? html`<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header"><span class="brand">flowplan</span></header>` : ''}
<main id="main" tabindex="-1">${input.body}</main>${full ? html`
<footer class="site-footer"><p>Made with flowplan</p></footer>` : ''}
</body></html>`;
  return {
    status: input.status ?? 200,
    body: Buffer.from(markup.text),
    contentType: 'text/html; charset=utf-8',
    ...(input.etag !== undefined ? { etag: input.etag } : {}),
    headers: {
      'Content-Security-Policy': contentSecurityPolicy(input),
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': input.cacheControl ?? 'no-store',
      // For browsers without CSP level 2; a frameable page (an embed) must not send it.
      ...(input.frameAncestors === undefined ? { 'X-Frame-Options': 'DENY' } : {}),
      ...input.headers,
    },
    ...(input.cookies ? { cookies: input.cookies } : {}),
  };
}

/**
 * The stylesheet as a static file. Not part of the API, so hidden from the OpenAPI document;
 * cacheable for a day (the page links it with its version) and revalidated by its ETag.
 */
export const assetRoutes: Route[] = [{
  method: 'GET', path: '/assets/flowplan.css', operationId: 'getStylesheet', summary: 'The pages\' stylesheet',
  auth: 'none', hidden: true, rateLimit: 'address',
  responses: { 200: { description: 'CSS', contentType: 'text/css' } },
  handler: () => ({
    status: 200, body: STYLESHEET, contentType: 'text/css; charset=utf-8', etag: STYLESHEET_TAG,
    headers: { 'Cache-Control': 'public, max-age=86400' },
  }),
}];
