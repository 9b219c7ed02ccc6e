/**
 * Web-app sessions and CSRF tokens, both in cookies. The session cookie holds a random id
 * (the database keeps its hash); it is `HttpOnly`, `SameSite=Lax`, and `__Host-` + `Secure`
 * wherever the browser treats the app's origin as secure (https, or loopback, which browsers
 * count as a secure context); a browser drops a `__Host-` cookie without `Secure`, so plain
 * http on another host falls back to an unprefixed name. Forms carry a double-submit token
 * that must equal the `__Host-` CSRF cookie, which another site can neither read nor set.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import { DomainError } from '../../platform/errors.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/database.ts';
import { newSecret } from '../../services/auth/secrets.ts';
import {
  closeSession,
  liveSession,
  openSession,
  SESSION_SECONDS,
  type SessionRow,
} from '../../services/account/sessions.service.ts';

export { chooseWorkspace } from '../../services/account/sessions.service.ts';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

export interface CookieNames {
  session: string;
  csrf: string;
  /** What one page hands the next after a redirect (flashCookie). */
  flash: string;
  secure: boolean;
}

export function cookieNames(config: Config): CookieNames {
  const app = new URL(config.appUrl);
  const secure = app.protocol === 'https:' || LOOPBACK.has(app.hostname);
  const prefix = secure ? '__Host-' : '';
  return {
    session: `${prefix}fp_session`,
    csrf: `${prefix}fp_csrf`,
    flash: `${prefix}fp_flash`,
    secure,
  };
}

const cookiesOf = (headers: Readonly<Record<string, string>>) =>
  parseCookie(headers['cookie'] ?? '');

function cookie(names: CookieNames, name: string, value: string, maxAge: number): string {
  return stringifySetCookie({
    name,
    value,
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    maxAge,
    secure: names.secure,
  });
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

export async function visitor(
  sql: Db,
  names: CookieNames,
  headers: Readonly<Record<string, string>>,
): Promise<Visitor> {
  const cookies = cookiesOf(headers);
  const live = await liveSession(sql, cookies[names.session]);
  const sessionHash = live?.sessionHash ?? null;
  const session = live?.session ?? null;
  const existing = cookies[names.csrf];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing))
    return { sessionHash, session, csrf: existing, cookies: [] };
  const csrf = newSecret('x').slice(2);
  return {
    sessionHash,
    session,
    csrf,
    cookies: [cookie(names, names.csrf, csrf, SESSION_SECONDS)],
  };
}

/** A flash lives until the page after the redirect reads it, or these few minutes. */
const FLASH_SECONDS = 300;

const flashKey = (sessionId: string) =>
  createHash('sha256').update('flowplan flash\0').update(sessionId).digest();

/**
 * What a form post hands the page it redirects to (POST/redirect/GET: a reload then repeats
 * the GET, not the post), such as a new key's secret, shown once. The browser keeps it only
 * sealed (AES-GCM) under its session id, which the server stores only as a hash: no other
 * session, and nothing reading the cookie alone, can open it. Any process can.
 */
export function flashCookie(
  names: CookieNames,
  headers: Readonly<Record<string, string>>,
  value: object,
): string[] {
  const sessionId = cookiesOf(headers)[names.session];
  if (!sessionId) return [];
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(sessionId), iv);
  const sealed = Buffer.concat([
    iv,
    cipher.update(JSON.stringify(value), 'utf8'),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return [cookie(names, names.flash, sealed.toString('base64url'), FLASH_SECONDS)];
}

/** The flash this request carries (null if none or not this session's), and the cookie that clears it: it is read once. */
export function takeFlash<T>(
  names: CookieNames,
  headers: Readonly<Record<string, string>>,
): { value: T | null; cookies: string[] } {
  const cookies = cookiesOf(headers);
  const sealed = cookies[names.flash];
  if (!sealed) return { value: null, cookies: [] };
  const clear = [cookie(names, names.flash, '', 0)];
  const sessionId = cookies[names.session];
  const bytes = Buffer.from(sealed, 'base64url');
  if (!sessionId || bytes.length < 12 + 16) return { value: null, cookies: clear };
  try {
    const decipher = createDecipheriv('aes-256-gcm', flashKey(sessionId), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const text = Buffer.concat([
      decipher.update(bytes.subarray(12, bytes.length - 16)),
      decipher.final(),
    ]).toString('utf8');
    return { value: JSON.parse(text) as T, cookies: clear };
  } catch {
    return { value: null, cookies: clear }; // another session's, or tampered with
  }
}

/** Refuses a form whose token does not match the browser's CSRF cookie. */
export function checkCsrf(
  names: CookieNames,
  headers: Readonly<Record<string, string>>,
  token: string | undefined,
): void {
  const expected = cookiesOf(headers)[names.csrf];
  const ok =
    expected !== undefined &&
    token !== undefined &&
    expected.length === token.length &&
    timingSafeEqual(Buffer.from(expected), Buffer.from(token));
  if (!ok)
    throw new DomainError(
      'FORBIDDEN',
      'This form has expired or did not come from this site; reload the page and try again',
    );
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
  return {
    cookies: [
      cookie(names, names.session, id, SESSION_SECONDS),
      cookie(names, names.csrf, csrf, SESSION_SECONDS),
    ],
    csrf,
  };
}

export async function endSession(
  sql: Db,
  names: CookieNames,
  sessionHash: string | null,
): Promise<string[]> {
  if (sessionHash) await closeSession(sql, sessionHash);
  return [cookie(names, names.session, '', 0), cookie(names, names.csrf, '', 0)];
}
