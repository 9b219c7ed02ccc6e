/**
 * Redirect URIs of first-party (native) clients: loopback only, matched on scheme, host,
 * path and query with any port (RFC 8252 §7.3), since a native app listens on whatever
 * port the system gives it.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

export function isLoopbackUri(uri: string): boolean {
  const url = parse(uri);
  return (
    url !== null &&
    url.protocol === 'http:' &&
    LOOPBACK_HOSTS.has(url.hostname) &&
    url.hash === '' &&
    url.username === '' &&
    url.password === ''
  );
}

/** True when `presented` is a loopback URI that one of the client's registered URIs allows. */
export function redirectUriAllowed(presented: string, registered: readonly string[]): boolean {
  if (!isLoopbackUri(presented)) return false;
  const url = parse(presented)!;
  return registered.some((uri) => {
    const allowed = parse(uri);
    return (
      allowed !== null &&
      isLoopbackUri(uri) &&
      allowed.protocol === url.protocol &&
      allowed.hostname === url.hostname &&
      allowed.pathname === url.pathname &&
      allowed.search === url.search
    );
  });
}

/** The redirect URI with the response parameters added to its query. */
export function withParams(uri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) url.searchParams.set(name, value);
  }
  return url.toString();
}
