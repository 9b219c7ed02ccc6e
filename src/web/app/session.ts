/**
 * Web-app sessions and CSRF tokens, both in cookies. The session cookie holds a random id
 * (the database keeps its hash); it is `HttpOnly`, `SameSite=Lax`, and `__Host-` + `Secure`
 * wherever the browser treats the app's origin as secure (https, or loopback, which browsers
 * count as a secure context); a browser drops a `__Host-` cookie without `Secure`, so plain
 * http on another host falls back to an unprefixed name. Forms carry a double-submit token
 * that must equal the `__Host-` CSRF cookie, which another site can neither read nor set.
 */
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../platform/errors.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/database.ts';
import { deleteSession, findSession, insertSession, memberRole, setSessionWorkspace, type SessionRow } from '../../storage/people.store.ts';
import { newSecret, sha256 } from '../../services/auth/secrets.ts';

const SESSION_SECONDS = 12 * 3600;
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
  const id = cookies[names.session];
  const sessionHash = id && /^fpx_[A-Za-z0-9_-]{43}$/.test(id) ? sha256(id) : null;
  const session = sessionHash ? await findSession(sql, sessionHash) : null;
  const existing = cookies[names.csrf];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { sessionHash: session ? sessionHash : null, session, csrf: existing, cookies: [] };
  const csrf = newSecret('x').slice(2);
  return { sessionHash: session ? sessionHash : null, session, csrf, cookies: [cookie(names, names.csrf, csrf, SESSION_SECONDS)] };
}

/** Refuses a form whose token does not match the browser's CSRF cookie. */
export function checkCsrf(names: CookieNames, headers: Readonly<Record<string, string>>, token: string | undefined): void {
  const expected = parseCookies(headers['cookie'])[names.csrf];
  const ok = expected !== undefined && token !== undefined && expected.length === token.length
    && timingSafeEqual(Buffer.from(expected), Buffer.from(token));
  if (!ok) throw new ApiError('FORBIDDEN', 'This form has expired or did not come from this site; reload the page and try again');
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
  if (previous) await deleteSession(sql, previous);
  const id = newSecret('fpx');
  await insertSession(sql, { idHash: sha256(id), userId, workspaceId, expiresAt: new Date(Date.now() + SESSION_SECONDS * 1000) });
  const csrf = newSecret('x').slice(2);
  return { cookies: [cookie(names, names.session, id, SESSION_SECONDS), cookie(names, names.csrf, csrf, SESSION_SECONDS)], csrf };
}

/** Points the session at another of the person's workspaces; 404 for one they do not belong to. */
export async function chooseWorkspace(sql: Db, sessionHash: string, userId: string, workspaceId: string): Promise<void> {
  if (!(await memberRole(sql, workspaceId, userId))) throw new ApiError('NOT_FOUND', 'You do not belong to that workspace');
  await setSessionWorkspace(sql, sessionHash, workspaceId);
}

export async function endSession(sql: Db, names: CookieNames, sessionHash: string | null): Promise<string[]> {
  if (sessionHash) await deleteSession(sql, sessionHash);
  return [cookie(names, names.session, '', 0), cookie(names, names.csrf, '', 0)];
}
