/**
 * A browser without a browser, for the people tests: a cookie jar, redirects not followed,
 * and form posts carrying the CSRF token the page rendered, the way a plain HTML form does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createClient } from '../../../src/services/auth/provision.ts';
import type { Scope } from '../../../src/services/auth/principal.ts';
import type { TestServer } from '../../helpers/server.ts';
import { createPerson } from '../../helpers/people.ts';

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export class Agent {
  readonly jar = new Map<string, string>();

  constructor(readonly base: string) {}

  cookieHeader(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)))
        this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async request(
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<PageResponse> {
    const url = path.startsWith('http') ? path : this.base + path;
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      body,
      headers: {
        ...(this.jar.size ? { cookie: this.cookieHeader() } : {}),
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
    });
    this.remember(response.headers);
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get('location'),
    };
  }

  get(path: string): Promise<PageResponse> {
    return this.request('GET', path);
  }

  /** Posts a form; `csrf` is taken from the page the form came from unless given. */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    page?: PageResponse,
    headers: Record<string, string> = {},
  ): Promise<PageResponse> {
    const form = new URLSearchParams();
    const csrf = page ? csrfOf(page.text) : undefined;
    if (csrf && !('csrf' in fields)) form.append('csrf', csrf);
    for (const [name, value] of Object.entries(fields))
      for (const v of [value].flat()) form.append(name, v);
    return this.request('POST', path, form.toString(), headers);
  }
}

export function csrfOf(html: string): string | undefined {
  return /name="csrf" value="([^"]+)"/.exec(html)?.[1];
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'http://127.0.0.1/callback';

/** A person in the Demo workspace and a first-party client, as an operator would set them up. */
export async function setUpPerson(
  s: TestServer,
  options: {
    email?: string;
    role?: 'owner' | 'admin' | 'member' | 'viewer';
    scopes?: Scope[];
  } = {},
) {
  const email = options.email ?? `p${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  const { id: userId } = await createPerson(s.sql, {
    email,
    name: 'Pat Person',
    password,
    workspaceId: s.workspaceId,
    role: options.role ?? 'admin',
  });
  const { clientId } = await createClient(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: options.scopes ?? ['flows:read', 'flows:write', 'work:write', 'team:read'],
    name: 'Flowplan CLI',
    firstParty: true,
    redirectUris: [REDIRECT, 'http://[::1]/callback'],
  });
  return { email, password, userId, clientId };
}

export function authorizePath(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) query.append(name, value);
  return `/v1/oauth/authorize?${query}`;
}

/**
 * The whole browser part of a sign-in: authorize, sign-in form, consent form. Returns the
 * redirect to the client (with `code` or `error`).
 */
export async function signInAndConsent(
  agent: Agent,
  input: {
    clientId: string;
    email: string;
    password: string;
    challenge: string;
    state?: string;
    scope?: string;
    redirectUri?: string;
    approveScopes?: string[];
    workspace?: string;
  },
): Promise<URL> {
  const start = await agent.get(
    authorizePath({
      client_id: input.clientId,
      redirect_uri: input.redirectUri ?? REDIRECT,
      response_type: 'code',
      code_challenge: input.challenge,
      code_challenge_method: 'S256',
      state: input.state ?? 'st-1',
      scope: input.scope,
    }),
  );
  if (start.status !== 302) throw new Error(`authorize answered ${start.status}: ${start.text}`);
  const signinPage = await agent.get(start.location!);
  let consentPage: PageResponse;
  if (signinPage.status === 303) {
    consentPage = await agent.get(signinPage.location!);
  } else {
    const request = new URL(start.location!, agent.base).searchParams.get('request')!;
    const signedIn = await agent.post(
      '/app/signin',
      { email: input.email, password: input.password, request },
      signinPage,
    );
    if (signedIn.status !== 303)
      throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.text}`);
    consentPage = await agent.get(signedIn.location!);
  }
  if (consentPage.status !== 200)
    throw new Error(`consent page answered ${consentPage.status}: ${consentPage.text}`);
  const request = /name="request" value="([^"]+)"/.exec(consentPage.text)![1]!;
  const workspace =
    input.workspace ?? /name="workspace" value="([^"]+)"/.exec(consentPage.text)![1]!;
  const scopes =
    input.approveScopes ??
    [...consentPage.text.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!);
  const decided = await agent.post(
    '/app/consent',
    { request, workspace, scope: scopes, decision: 'approve' },
    consentPage,
  );
  if (decided.status !== 303)
    throw new Error(`consent answered ${decided.status}: ${decided.text}`);
  return new URL(decided.location!);
}
