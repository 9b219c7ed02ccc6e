/**
 * The one HTML page frame every server-rendered page uses (public views, the web app, the
 * unsubscribe pages): a skip link, landmarks, the stylesheet, and the security headers.
 * The CSP allows nothing inline, so markup injected through user text could not run or
 * style anything even if it escaped the `html` tag; `frame-ancestors` is `'none'` unless a
 * page (an embed) says otherwise.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { html, oneLine, type Html } from '../../platform/html.ts';
import type { Reply, Route } from './route.ts';

const STYLESHEET = readFileSync(new URL('./assets/flowplan.css', import.meta.url));
const STYLESHEET_TAG = hash('sha1', STYLESHEET, 'base64url');
/** The version in the query string lets browsers cache the file and still see a new one at once. */
export const STYLESHEET_PATH = `/assets/flowplan.css?v=${STYLESHEET_TAG}`;
/** The icon: SVG for browsers that take it, ICO (16, 32, 48 px) at the address every browser asks for (made by scripts/favicon.ts). */
const ICON_SVG = readFileSync(new URL('./assets/favicon.svg', import.meta.url));
const ICON_ICO = readFileSync(new URL('./assets/favicon.ico', import.meta.url));

export interface PageInput {
  /** The document's title (also its accessible name); drawn on one line (`oneLine`), as a browser's tab shows it. */
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

export function contentSecurityPolicy(
  input: Pick<PageInput, 'frameAncestors' | 'scripts' | 'formAction'>,
): string {
  return [
    "default-src 'none'",
    input.scripts?.length ? "script-src 'self'" : null,
    // A page's own script may ask its own origin whether the page changed (the app's live flow page).
    input.scripts?.length ? "connect-src 'self'" : null,
    "style-src 'self'",
    "img-src 'self' data:",
    ['form-action', "'self'", ...(input.formAction ?? [])].join(' '),
    `frame-ancestors ${input.frameAncestors ?? "'none'"}`,
    "base-uri 'none'",
  ]
    .filter((d) => d !== null)
    .join('; ');
}

export function page(input: PageInput): Reply {
  const full = (input.chrome ?? 'full') === 'full';
  const markup = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${oneLine(input.title)}</title><link rel="stylesheet" href="${STYLESHEET_PATH}"><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="icon" href="/favicon.ico" sizes="16x16 32x32 48x48">${input.head}${(input.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}</head>
<body class="${full ? 'fp-page' : 'fp-page fp-embed'}">${
    full
      ? html`<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header"><span class="brand">flowplan</span></header>`
      : ''
  }
<main id="main" tabindex="-1">${input.body}</main>${
    full
      ? html`
<footer class="site-footer"><p>Made with flowplan</p></footer>`
      : ''
  }
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

const asset = (
  path: string,
  operationId: string,
  summary: string,
  body: Buffer,
  contentType: string,
): Route => ({
  method: 'GET',
  path,
  operationId,
  summary,
  auth: 'none',
  hidden: true,
  rateLimit: 'address',
  responses: { 200: { description: summary, contentType: contentType.split(';')[0]! } },
  handler: () => ({
    status: 200,
    body,
    contentType,
    etag: hash('sha1', body, 'base64url'),
    headers: { 'Cache-Control': 'public, max-age=86400' },
  }),
});

/**
 * The stylesheet and the icon as static files. Not part of the API, so hidden from the OpenAPI
 * document; cacheable for a day (the page links the stylesheet with its version) and revalidated by their ETags.
 */
export const assetRoutes: Route[] = [
  asset('/favicon.ico', 'getFaviconIco', 'The icon (ICO)', ICON_ICO, 'image/x-icon'),
  asset('/favicon.svg', 'getFaviconSvg', 'The icon (SVG)', ICON_SVG, 'image/svg+xml'),
  asset(
    '/assets/flowplan.css',
    'getStylesheet',
    "The pages' stylesheet",
    STYLESHEET,
    'text/css; charset=utf-8',
  ),
];
