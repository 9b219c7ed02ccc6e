/**
 * The request edge, independent of the socket library: route match, credential, rate
 * limit, plan, scope and role checks, input validation, idempotency, ETag/304 and the
 * error envelope. Handlers only ever see validated input from an allowed caller.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError, validationFailed } from '../../platform/errors.ts';
import type { Authenticator } from '../../services/auth/authenticate.ts';
import { roleAtLeast, type Principal } from '../../services/auth/principal.ts';
import { sha256 } from '../../services/auth/secrets.ts';
import { compile } from '../schemas/validator.ts';
import { isDatabaseUnavailable, type Sql } from '../../platform/database.ts';
import type { StagedBlob } from '../../services/files/files.service.ts';
import { claimKey, completeKey, releaseKey } from '../../storage/idempotency.store.ts';
import { addressBucket } from '../../platform/client-address.ts';
import { etagOf, etagOfBody, matchesIfNoneMatch } from './etag.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { HttpMetrics } from './http-metrics.ts';
import { MsgpackCache, msgpackTag, msgpackWanted } from './msgpack.ts';
import type { Limiter, RateLimiter } from '../../services/limits/rate-limit.ts';
import type { RequestContext, Route } from './route.ts';
import { Router, type Match } from './router.ts';
import { parseQuery, readBody } from './input.ts';

/** What is known of a request before its body: the request line and the headers. */
export interface RequestHead {
  method: string;
  path: string;
  query: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The client's IP address, as text (through trusted proxies: see client-address.ts). */
  remoteAddress: string;
}

export interface IncomingRequest extends RequestHead {
  body: Buffer;
  /** An upload route's body, as it arrives (the transport holds at most a window of it). */
  bodySource?: AsyncIterable<Buffer>;
}

/** A request let in from its head alone: who it is, and what has been decided for it already. */
export interface Admission {
  principal: Principal | null;
  /** The budget it spent (refunded by a 304). */
  rateKey: string | null;
  requestId: string;
  /** Response headers decided so far (request id, rate-limit state). */
  headers: Record<string, string>;
  started: number;
}

export interface OutgoingResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string | null;
  /** `Set-Cookie` values, written as one header each. */
  cookies?: string[];
}

interface Compiled {
  params: ((value: unknown) => Record<string, string>) | null;
  query: ((value: unknown) => Record<string, unknown>) | null;
  body: ((value: unknown) => unknown) | null;
}

export interface EdgeDeps {
  sql: Sql;
  auth: Authenticator;
  /** The per-credential budget, shared by every process on the database. */
  limiter: Limiter;
  /** The separate per-client-address budget of routes with `rateLimit: 'address'`. */
  addressLimiter: RateLimiter;
  /** Failed credential checks per client address: spent, they are answered 429 (guessing and floods). */
  failedCredentialLimiter: RateLimiter;
  metrics: Metrics;
  log: Logger;
  maxBodyBytes: number;
  /** Where uploads are written as they arrive (the files service). */
  uploads: { stage(source: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<StagedBlob>; discard(blobId: string): Promise<void> };
}

const JSON_TYPE = 'application/json; charset=utf-8';

export class Edge {
  readonly router = new Router();
  private readonly compiled = new Map<Route, Compiled>();
  private readonly msgpack = new MsgpackCache();
  private readonly metrics: HttpMetrics;

  constructor(private readonly deps: EdgeDeps) {
    this.metrics = new HttpMetrics(deps.metrics);
  }

  add(routes: Route[]): void {
    for (const route of routes) {
      this.router.add(route);
      this.compiled.set(route, {
        params: route.params ? compile(route.params, 'path') : null,
        query: route.query ? compile(route.query, 'query') : null,
        body: route.body && route.bodyKind !== 'form' ? compile(route.body, 'body') : null,
      });
    }
  }

  /** The route a request goes to, matched once by the transport before it reads the body. */
  match(method: string, path: string): Match {
    return this.router.match(method, path);
  }

  /** Whether the route takes its body as a stream written to storage as it arrives (uploads). */
  streamsBody(match: Match): boolean {
    return match.kind === 'found' && match.route.bodyKind === 'upload';
  }

  /** The cap the transport enforces while reading a body for this request. */
  bodyLimit(match: Match): number {
    return match.kind === 'found' ? (match.route.maxBodyBytes ?? this.deps.maxBodyBytes) : this.deps.maxBodyBytes;
  }

  /**
   * Decides a request from its head alone: the route, the credential, the rate budget and
   * access (and a route's own check, such as a storage quota). The transport calls it before
   * it keeps any byte of a body: a request refused here is answered at once and its body
   * dropped. `handle` then takes the admission along with the body.
   */
  async admit(head: RequestHead, match: Match): Promise<{ admitted: Admission } | { refused: OutgoingResponse }> {
    const started = performance.now();
    const requestId = requestIdOf(head.headers);
    const headers: Record<string, string> = { 'X-Request-Id': requestId };
    try {
      const route = found(head, match);
      const admitted = await this.admission(route, match.kind === 'found' ? match.params : {}, head, requestId, headers, started);
      if (route.beforeBody) await route.beforeBody({ principal: admitted.principal, params: match.kind === 'found' ? match.params : {}, headers: head.headers });
      return { admitted };
    } catch (error) {
      const response = this.failure(error, headers, head, requestId, match.kind === 'found' ? match.route : null);
      this.observe(head, match, response, started, requestId);
      return { refused: response };
    }
  }

  async handle(request: IncomingRequest, match: Match = this.match(request.method, request.path), admitted?: Admission): Promise<OutgoingResponse> {
    const started = admitted?.started ?? performance.now();
    const requestId = admitted?.requestId ?? requestIdOf(request.headers);
    const headers: Record<string, string> = admitted?.headers ?? { 'X-Request-Id': requestId };
    let response: OutgoingResponse;
    try {
      const route = found(request, match);
      const admission = admitted ?? (await this.admission(route, match.kind === 'found' ? match.params : {}, request, requestId, headers, started));
      response = await this.dispatch(route, match.kind === 'found' ? match.params : {}, request, admission);
    } catch (error) {
      response = this.failure(error, headers, request, requestId, match.kind === 'found' ? match.route : null);
    }
    this.observe(request, match, response, started, requestId);
    return response;
  }

  private observe(head: RequestHead, match: Match, response: OutgoingResponse, started: number, requestId: string): void {
    const seconds = (performance.now() - started) / 1000;
    this.metrics.observeRequest(head.method, match.kind === 'found' ? match.route.path : 'unmatched', response.status, seconds);
    if (response.status >= 500) {
      this.deps.log.warn({ requestId, method: head.method, path: head.path, status: response.status }, 'request failed');
    } else {
      this.deps.log.debug({ requestId, method: head.method, path: head.path, status: response.status, ms: seconds * 1000 }, 'request');
    }
  }

  /** Credential, rate budget, guest access, plan, scope and role: everything the head decides. */
  private async admission(
    route: Route,
    rawParams: Record<string, string>,
    head: RequestHead,
    requestId: string,
    headers: Record<string, string>,
    started: number,
  ): Promise<Admission> {
    let principal: Principal | null = null;
    let rateKey: string | null = null;
    if (route.auth === 'bearer') {
      headers['Vary'] = 'Authorization';
      try {
        principal = await this.deps.auth.authenticate(head.headers['authorization']);
      } catch (error) {
        throw this.failedCredential(error, head);
      }
      rateKey = principal.userId ? `${principal.credentialId}:${principal.userId}` : principal.credentialId;
      let rate = this.deps.limiter.take(rateKey);
      if (rate instanceof Promise) rate = await rate;
      Object.assign(headers, this.deps.limiter.headers(rate));
      if (!rate.allowed) {
        this.metrics.rateLimited.inc({ reason: 'credential' });
        throw new ApiError('RATE_LIMITED', 'Rate limit exceeded for this credential', {
          limit: this.deps.limiter.perMinute,
          burst: this.deps.limiter.burst,
          retryAfter: rate.retryAfterSeconds,
        }, { 'Retry-After': String(rate.retryAfterSeconds) });
      }
      if (route.guest && principal.userId && rawParams.flowId) principal = await this.deps.auth.asGuest(principal, rawParams.flowId, route.guest);
      authorize(route, principal);
    } else if (route.rateLimit === 'address') {
      rateKey = `address:${addressBucket(head.remoteAddress)}`;
      const rate = this.deps.addressLimiter.take(rateKey);
      if (!rate.allowed) {
        this.metrics.rateLimited.inc({ reason: 'address' });
        throw new ApiError('RATE_LIMITED', 'Too many requests from this address', {
          limit: this.deps.addressLimiter.perMinute,
          burst: this.deps.addressLimiter.burst,
          retryAfter: rate.retryAfterSeconds,
        }, { 'Retry-After': String(rate.retryAfterSeconds) });
      }
    }
    return { principal, rateKey, requestId, headers, started };
  }

  /**
   * What a credential that does not check out answers: it spends its address's budget, and
   * once that is spent the answer is 429.
   */
  private failedCredential(error: unknown, head: RequestHead): unknown {
    if (!(error instanceof ApiError) || error.status !== 401) return error;
    const limiter = this.deps.failedCredentialLimiter;
    const rate = limiter.take(`failed:${addressBucket(head.remoteAddress)}`);
    if (rate.allowed) return error;
    this.metrics.rateLimited.inc({ reason: 'failed-credential' });
    return new ApiError('RATE_LIMITED', 'Too many failed credential checks from this address', {
      limit: limiter.perMinute, burst: limiter.burst, retryAfter: rate.retryAfterSeconds,
    }, { 'Retry-After': String(rate.retryAfterSeconds) });
  }

  /** Not async on purpose: the common path hands back respond's promise without another frame to settle. */
  private dispatch(route: Route, rawParams: Record<string, string>, request: IncomingRequest, admission: Admission): Promise<OutgoingResponse> {
    const compiled = this.compiled.get(route)!;
    const params = compiled.params ? compiled.params(rawParams) : rawParams;
    const queryObject = parseQuery(request.query);
    const query = compiled.query ? compiled.query(queryObject) : queryObject;
    const body = readBody(route, request, compiled.body);
    if (route.bodyKind !== 'upload') return this.respond(route, request, admission, { params, query, body, upload: null });
    return this.dispatchUpload(route, request, admission, { params, query, body });
  }

  /**
   * An upload is written to storage as it arrives; the file row its handler writes takes the
   * blob over, and whatever no row took (a refusal, a replay, a failure) is removed after.
   */
  private async dispatchUpload(
    route: Route,
    request: IncomingRequest,
    admission: Admission,
    input: Pick<RequestContext, 'params' | 'query' | 'body'>,
  ): Promise<OutgoingResponse> {
    const upload = await this.deps.uploads.stage(request.bodySource ?? [request.body]);
    try {
      return await this.respond(route, request, admission, { params: input.params, query: input.query, body: input.body, upload });
    } finally {
      await this.deps.uploads.discard(upload.blobId);
    }
  }

  private async respond(
    route: Route,
    request: IncomingRequest,
    admission: Admission,
    input: Pick<RequestContext, 'params' | 'query' | 'body' | 'upload'>,
  ): Promise<OutgoingResponse> {
    const { principal, rateKey, requestId, headers } = admission;
    const parentLog = this.deps.log;
    let log: Logger | null = null;
    // Listed, not spread: a spread ahead of the getter takes V8 off the literal's fast path
    // (bench:http lost a third of its requests a second to this object).
    const ctx: RequestContext = {
      params: input.params, query: input.query, body: input.body, upload: input.upload, rawBody: request.body, headers: request.headers, principal, remoteAddress: request.remoteAddress, requestId,
      // Most requests never log: build the child logger only when one does.
      get log() {
        return (log ??= parentLog.child({ requestId }));
      },
    };
    const ifNoneMatch = request.method === 'GET' ? request.headers['if-none-match'] : undefined;

    const msgpack = request.method === 'GET' ? msgpackWanted(request.headers['accept']) : null;
    // A version-backed tag answers 304 before the handler renders anything.
    if (ifNoneMatch && route.etag) {
      const tag = await route.etag(ctx);
      const etag = tag === null ? null : msgpack ? msgpackTag(etagOf(tag)) : etagOf(tag);
      if (etag !== null && matchesIfNoneMatch(ifNoneMatch, etag)) {
        varyByAccept(headers);
        return this.notModified(etag, headers, rateKey, route);
      }
    }
    const representation = msgpack ? { type: msgpack, key: `${principal ? principalKey(principal) : ''} ${request.path}?${request.query}` } : null;

    const idempotencyKey = request.method === 'POST' && principal ? request.headers['idempotency-key'] : undefined;
    if (idempotencyKey !== undefined && principal) {
      const content = input.upload ? `upload ${input.upload.sha256}` : request.body.toString('base64');
      return await this.idempotent(principalKey(principal), idempotencyKey, request, content, requestId, headers, () => this.run(route, ctx, headers, ifNoneMatch, rateKey, null));
    }
    // Awaited, not returned: an async function that returns a promise settles two ticks later.
    return await this.run(route, ctx, headers, ifNoneMatch, rateKey, representation);
  }

  private async run(
    route: Route,
    ctx: RequestContext,
    headers: Record<string, string>,
    ifNoneMatch: string | undefined,
    rateKey: string | null,
    /** MessagePack asked for (GET): its type, and the key its bytes are cached under with the tag. */
    representation: { type: string; key: string } | null,
  ): Promise<OutgoingResponse> {
    const reply = await route.handler(ctx);
    Object.assign(headers, reply.headers);
    const cookies = reply.cookies;
    if (reply.status === 204 || reply.body === undefined) return { status: reply.status, headers, body: null, cookies };
    const isBytes = Buffer.isBuffer(reply.body);
    let payload: string | Buffer = isBytes ? (reply.body as Buffer) : JSON.stringify(reply.body);
    headers['Content-Type'] = reply.contentType ?? (isBytes ? 'application/octet-stream' : JSON_TYPE);
    if (route.method === 'GET' && reply.status === 200) {
      let tag = reply.etag !== undefined ? etagOf(reply.etag) : etagOfBody(payload);
      if (headers['Content-Type'].startsWith('application/json')) {
        varyByAccept(headers);
        // A reply the route already compressed (public views) is sent as it is.
        if (representation && !headers['Content-Encoding']) {
          tag = msgpackTag(tag);
          if (!matchesIfNoneMatch(ifNoneMatch, tag)) payload = this.msgpack.encode(`${representation.key} ${tag}`, payload);
          headers['Content-Type'] = representation.type;
        }
      }
      headers['ETag'] = tag;
      if (matchesIfNoneMatch(ifNoneMatch, tag)) return this.notModified(tag, headers, rateKey, route);
    }
    return { status: reply.status, headers, body: payload, cookies };
  }

  private notModified(tag: string, headers: Record<string, string>, rateKey: string | null, route: Route): OutgoingResponse {
    // A 304 spends nothing of the caller's budget.
    if (rateKey && route.auth === 'bearer') {
      this.deps.limiter.refund(rateKey);
      Object.assign(headers, this.deps.limiter.headers(this.deps.limiter.peek(rateKey)));
    } else if (rateKey) {
      this.deps.addressLimiter.refund(rateKey);
    }
    headers['ETag'] = tag;
    delete headers['Content-Type'];
    return { status: 304, headers, body: null };
  }

  private async idempotent(
    /** Whose answer it is (principalKey): another principal's same key is a key of its own. */
    owner: string,
    key: string,
    request: IncomingRequest,
    /** The body as the request hash covers it: its bytes, or an upload's digest. */
    content: string,
    requestId: string,
    headers: Record<string, string>,
    run: () => Promise<OutgoingResponse>,
  ): Promise<OutgoingResponse> {
    if (key.length === 0 || key.length > 255) {
      throw validationFailed([{ in: 'header', pointer: '/idempotency-key', message: 'must be 1 to 255 characters' }], 'Idempotency-Key must be 1 to 255 characters');
    }
    const requestHash = sha256(`${request.method} ${request.path}?${request.query}\n${content}`);
    const claim = await claimKey(this.deps.sql, owner, key, requestHash);
    if (claim.kind === 'reused') throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with another request body');
    if (claim.kind === 'in-use') throw new ApiError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running');
    if (claim.kind === 'replay') {
      // The stored answer, with this request's own id and rate-limit state.
      const { status, headers: stored, body } = claim.response;
      return { status, headers: { ...headers, ...stored, 'Idempotent-Replayed': 'true' }, body: status === 204 ? null : body };
    }
    let response: OutgoingResponse;
    try {
      response = await run();
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        response = this.failure(error, headers, request, requestId, null);
      } else {
        await releaseKey(this.deps.sql, owner, key);
        throw error;
      }
    }
    const body = response.body === null ? Buffer.alloc(0) : Buffer.from(response.body);
    const stored = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !/^(x-)?ratelimit|^x-request-id$/i.test(name)));
    await completeKey(this.deps.sql, owner, key, { status: response.status, headers: stored, body });
    return response;
  }

  private failure(error: unknown, headers: Record<string, string>, request: RequestHead, requestId: string, route: Route | null): OutgoingResponse {
    const apiError = toApiError(error);
    if (isDatabaseUnavailable(error)) {
      this.deps.log.warn({ code: (error as { code: string }).code, requestId, method: request.method, path: request.path }, 'database out of reach');
    } else if (apiError.status >= 500) {
      this.deps.log.error({ err: error, requestId, method: request.method, path: request.path }, 'unhandled error');
    }
    Object.assign(headers, apiError.headers);
    if (route?.renderError) {
      const reply = route.renderError(apiError);
      Object.assign(headers, reply.headers);
      headers['Content-Type'] = reply.contentType ?? 'text/html; charset=utf-8';
      const body = reply.body === undefined ? null : Buffer.isBuffer(reply.body) ? reply.body : String(reply.body);
      return { status: reply.status, headers, body, cookies: reply.cookies };
    }
    headers['Content-Type'] = JSON_TYPE;
    return { status: apiError.status, headers, body: JSON.stringify(apiError.toBody()) };
  }
}

/**
 * Who an answer belongs to: the credential, and for a person token also the person and the
 * workspace it acts in. Every person signed in through one first-party client shares its
 * credential, so the credential alone would hand one person's stored answer to another.
 */
export function principalKey(principal: Principal): string {
  return principal.userId ? `${principal.credentialId}/${principal.userId}/${principal.workspaceId}` : principal.credentialId;
}

/** The matched route, or the 404 / 405 its absence answers. */
function found(head: RequestHead, match: Match): Route {
  if (match.kind === 'none') throw new ApiError('NOT_FOUND', `No route for ${head.path}`);
  if (match.kind === 'method') {
    throw new ApiError('METHOD_NOT_ALLOWED', `${head.method} is not allowed here`, { allow: match.allow }, { Allow: match.allow.join(', ') });
  }
  return match.route;
}

/** Plan, scope and role, in that order, before any handler runs. */
function authorize(route: Route, principal: Principal): void {
  if (principal.plan === 'free' && !route.freePlan) {
    throw new ApiError('PLAN_REQUIRED', 'API access needs the pro plan', { plan: principal.plan });
  }
  const missing = (route.scopes ?? []).filter((scope) => !principal.scopes.includes(scope));
  if (missing.length > 0) {
    throw new ApiError('INSUFFICIENT_SCOPE', `This call needs the scope ${missing.join(' ')}`, { required: route.scopes, missing });
  }
  const write = route.write ?? route.method !== 'GET';
  if (write && principal.role === 'viewer') {
    throw new ApiError('FORBIDDEN', 'A viewer credential cannot make changes', { role: principal.role });
  }
  if (route.minRole && !roleAtLeast(principal.role, route.minRole)) {
    throw new ApiError('FORBIDDEN', `This call needs role ${route.minRole} or above`, { role: principal.role, minRole: route.minRole });
  }
  if (write && principal.pastDue) {
    throw new ApiError('SUBSCRIPTION_PAST_DUE', 'The subscription is past due: changes are refused until it is paid');
  }
}

// SQLSTATE classes a client can cause with values that passed the schema.
const CLIENT_SQLSTATES: Record<string, string> = {
  '22001': 'A value is too long',
  '22003': 'A number is out of range',
  '22007': 'A date is not valid',
  '22008': 'A date is out of range',
  '22P02': 'A value has the wrong form',
  '22P05': 'Text may not contain NUL characters',
  '22021': 'Text is not valid UTF-8',
};

/** JSON GETs also answer MessagePack (src/web/http/msgpack.ts): the answer varies by Accept. */
function varyByAccept(headers: Record<string, string>): void {
  headers['Vary'] = headers['Vary'] ? `${headers['Vary']}, Accept` : 'Accept';
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is out of reach; retry shortly', undefined, { 'Retry-After': '2' });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in CLIENT_SQLSTATES) {
    return validationFailed([{ in: 'body', pointer: '', message: CLIENT_SQLSTATES[code]! }]);
  }
  return new ApiError('INTERNAL', 'Internal error');
}

// A process prefix and a counter: unique, and far cheaper than a UUID per request.
const REQUEST_ID_PREFIX = randomUUID().slice(0, 8);
let requestCounter = 0;
const nextRequestId = () => `${REQUEST_ID_PREFIX}-${(++requestCounter).toString(36)}`;

/** The caller's X-Request-Id when it is sane, else a new one. */
export function requestIdOf(headers: Record<string, string>): string {
  const given = headers['x-request-id'];
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : nextRequestId();
}
