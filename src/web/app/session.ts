/**
 * Web-app sessions and CSRF tokens, both in cookies. The session cookie holds a random id
 * (the database keeps its hash); it is `HttpOnly`, `SameSite=Lax`, and `__Host-` + `Secure`
 * wherever the browser treats the app's origin as secure (https, or loopback, which browsers
 * count as a secure context); a browser drops a `__Host-` cookie without `Secure`, so plain
 * http on another host falls back to an unprefixed name. Forms carry a double-submit token
 * that must equal the `__Host-` CSRF cookie, which another site can neither read nor set.
 */
import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '../../platform/errors.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/database.ts';
import { newSecret } from '../../services/auth/secrets.ts';
import { closeSession, liveSession, openSession, SESSION_SECONDS, type SessionRow } from '../../services/account/sessions.service.ts';

export { chooseWorkspace } from '../../services/account/sessions.service.ts';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface CookieNames {
  session: string;
  csrf: string;
  secure: boolean;
}

export function cookieNames(config: Config): CookieNames {
  const app = new URL(config.appUrl);
  const secure = app.protocol === 'https:' || LOOPBACK.has(app.hostname);
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}fp_session`, csrf: `${prefix}fp_csrf`, secure };
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

function cookie(names: CookieNames, name: string, value: string, maxAge: number): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${names.secure ? '; Secure' : ''}`;
}

export interface Visitor {
  /** Hash of the session id, when the cookie names a live session. */
  sessionHash: string | null;
  session: SessionRow | null;
  /** The CSRF token forms must echo; newly minted when the browser had none. */
  csrf: string;
  /** Cookies to set on the reply (a fresh CSRF cookie). */
  cookies: string[];
}

export async function visitor(sql: Db, names: CookieNames, headers: Readonly<Record<string, string>>): Promise<Visitor> {
  const cookies = parseCookies(headers['cookie']);
  const live = await liveSession(sql, cookies[names.session]);
  const sessionHash = live?.sessionHash ?? null;
  const session = live?.session ?? null;
  const existing = cookies[names.csrf];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { sessionHash, session, csrf: existing, cookies: [] };
  const csrf = newSecret('x').slice(2);
  return { sessionHash, session, csrf, cookies: [cookie(names, names.csrf, csrf, SESSION_SECONDS)] };
}

/** Refuses a form whose token does not match the browser's CSRF cookie. */
export function checkCsrf(names: CookieNames, headers: Readonly<Record<string, string>>, token: string | undefined): void {
  const expected = parseCookies(headers['cookie'])[names.csrf];
  const ok = expected !== undefined && token !== undefined && expected.length === token.length
    && timingSafeEqual(Buffer.from(expected), Buffer.from(token));
  if (!ok) throw new DomainError('FORBIDDEN', 'This form has expired or did not come from this site; reload the page and try again');
}

/**
 * A new session for the person (rotation: whatever session the browser had is ended), with a
 * fresh CSRF token. Returns the cookies to set and the new token.
 */
export async function startSession(
  sql: Db,
  names: CookieNames,
  previous: string | null,
  userId: string,
  workspaceId: string | null,
): Promise<{ cookies: string[]; csrf: string }> {
  const id = await openSession(sql, previous, userId, workspaceId);
  const csrf = newSecret('x').slice(2);
  return { cookies: [cookie(names, names.session, id, SESSION_SECONDS), cookie(names, names.csrf, csrf, SESSION_SECONDS)], csrf };
}

export async function endSession(sql: Db, names: CookieNames, sessionHash: string | null): Promise<string[]> {
  if (sessionHash) await closeSession(sql, sessionHash);
  return [cookie(names, names.session, '', 0), cookie(names, names.csrf, '', 0)];
}
