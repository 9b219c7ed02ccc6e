/**
 * Sign a person in from a native app with oauth4webapi: authorization code + PKCE (S256)
 * through a loopback redirect on any free port (RFC 8252), then call the API as that person,
 * rotate the refresh token, and see reuse detection at work.
 *
 *   npx flowplan client create --workspace wsp_… --role admin --scopes all --name "My CLI" \
 *     --first-party --redirect-uri http://127.0.0.1/callback --json
 *   FLOWPLAN_URL=http://127.0.0.1:8080 CLIENT_ID=cli_… node --import tsx examples/oauth-pkce.ts
 *
 * Open the printed address in a browser, sign in and allow access.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';

export interface SignInResult {
  me: Record<string, unknown>;
  accessToken: string;
  refreshToken: string;
  /** What the server answered when the first refresh token was presented again after rotation. */
  reuse: { status: number; code: string };
}

/**
 * Waits for the browser to come back to `http://127.0.0.1:<port>/callback`. Only that first
 * callback counts: whatever the browser asks for next (its favicon) is answered 404, and once
 * the answer is out the listener closes with every connection the browser kept open.
 */
async function loopback(): Promise<{ redirectUri: string; callback: Promise<URL> }> {
  let resolve!: (url: URL) => void;
  const callback = new Promise<URL>((r) => (resolve = r));
  let port = 0;
  let answered = false;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (answered || url.pathname !== '/callback') return void res.writeHead(404).end();
    answered = true;
    res.once('finish', () => {
      server.close();
      server.closeAllConnections();
    });
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
      .end('Signed in. You can close this window.');
    resolve(url);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  return { redirectUri: `http://127.0.0.1:${port}/callback`, callback };
}

export async function signIn(options: {
  issuer: string;
  clientId: string;
  scope?: string;
  openBrowser: (url: URL) => Promise<void>;
}): Promise<SignInResult> {
  const issuer = new URL(options.issuer);
  // Plain http is fine on loopback during development; say so to oauth4webapi explicitly.
  const http = { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' };
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...http }),
  );
  const client: oauth.Client = { client_id: options.clientId };
  const clientAuth = oauth.None();

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const { redirectUri, callback } = await loopback();
  const authorize = new URL(as.authorization_endpoint!);
  authorize.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...(options.scope ? { scope: options.scope } : {}),
  }).toString();
  await options.openBrowser(authorize);

  // Checks state and iss (RFC 9207) and turns an error= redirect into an exception.
  const params = oauth.validateAuthResponse(as, client, await callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      redirectUri,
      verifier,
      http,
    ),
  );

  const meResponse = await oauth.protectedResourceRequest(
    tokens.access_token,
    'GET',
    new URL('/v1/me', issuer),
    undefined,
    undefined,
    http,
  );
  const me = (await meResponse.json()) as Record<string, unknown>;

  // Rotation: every refresh returns a new refresh token; the old one stops working.
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, http),
  );

  // Presenting the rotated token again is what a thief would do: the server refuses it and
  // revokes the whole sign-in, including the tokens just issued.
  const reused = await oauth.refreshTokenGrantRequest(
    as,
    client,
    clientAuth,
    tokens.refresh_token!,
    http,
  );
  const reuse = {
    status: reused.status,
    code: ((await reused.json()) as { error: { code: string } }).error.code,
  };

  return { me, accessToken: refreshed.access_token, refreshToken: refreshed.refresh_token!, reuse };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const issuer = process.env.FLOWPLAN_URL ?? 'http://127.0.0.1:8080';
  const clientId = process.env.CLIENT_ID;
  if (!clientId)
    throw new Error(
      'Set CLIENT_ID to a first-party client (flowplan client create --first-party …)',
    );
  const result = await signIn({
    issuer,
    clientId,
    openBrowser: async (url) =>
      console.log(`Open this address in your browser to sign in:\n\n  ${url}\n`),
  });
  console.log('GET /v1/me as the person:', JSON.stringify(result.me));
  console.log(
    `Refreshed: access token ${result.accessToken.slice(0, 10)}…, refresh token ${result.refreshToken.slice(0, 10)}… (the first refresh token is spent)`,
  );
  console.log(
    `Presenting the spent refresh token again answered ${result.reuse.status} ${result.reuse.code}`,
  );
  const after = await fetch(new URL('/v1/me', issuer), {
    headers: { authorization: `Bearer ${result.accessToken}` },
  });
  const code = ((await after.json()) as { error?: { code: string } }).error?.code;
  console.log(
    `and revoked that whole sign-in: GET /v1/me with the newest access token now answers ${after.status} ${code}`,
  );
}
