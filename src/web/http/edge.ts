/**
 * The request edge, independent of the socket library: route match, credential, rate
 * limit, plan, scope and role checks, input validation, idempotency, ETag/304 and the
 * error envelope. Handlers only ever see validated input from an allowed caller.
 */
import type { Logger } from 'pino';
import { DomainError, insufficientScope, roleRequired } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Authenticator } from '../../services/auth/authenticate.ts';
import { roleAtLeast, type Principal } from '../../services/auth/principal.ts';
import type { StagedBlob } from '../../services/files/files.service.ts';
import type { IdempotencyKeys } from '../../services/idempotency/idempotency.service.ts';
import { compile } from './validator.ts';
import { Budgets, type BudgetLimiters } from './budgets.ts';
import { Conditional, type Representation } from './conditional.ts';
import { failureResponse, toDomainError } from './failures.ts';
import { HttpMetrics } from './http-metrics.ts';
import { idempotent, principalKey } from './idempotency.ts';
import { parseQuery, readBody } from './input.ts';
import {
  requestIdOf,
  type Admission,
  type IncomingRequest,
  type OutgoingResponse,
  type RequestHead,
  type Verdict,
} from './request.ts';
import { bodyKindOf, type RequestContext, type Route } from './route.ts';
import { Router, type Match } from './router.ts';
import { unwritable } from './writable.ts';

interface Compiled {
  params: ((value: unknown) => Record<string, string>) | null;
  query: ((value: unknown) => Record<string, unknown>) | null;
  body: ((value: unknown) => unknown) | null;
}

export interface EdgeDeps extends BudgetLimiters {
  auth: Authenticator;
  idempotencyKeys: IdempotencyKeys;
  metrics: Metrics;
  log: Logger;
  maxBodyBytes: number;
  /** Where uploads are written as they arrive (the files service). */
  uploads: {
    stage(
      workspaceId: string,
      source: AsyncIterable<Buffer> | Iterable<Buffer>,
    ): Promise<StagedBlob>;
    discard(workspaceId: string, blobId: string): Promise<void>;
  };
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** A form body's cap (the OAuth token and revoke requests): a token request is a few hundred bytes. */
export const FORM_BODY_BYTES = 64 * 1024;
/** What a credential's bodiless action reads and ignores (an empty JSON object and then some). */
export const IGNORED_BODY_BYTES = 1024;

export class Edge {
  readonly router = new Router();
  private readonly compiled = new Map<Route, Compiled>();
  private readonly metrics: HttpMetrics;
  private readonly budgets: Budgets;
  private readonly conditional: Conditional;
  private pages: { prefix: string; renderError: NonNullable<Route['renderError']> } | null = null;

  constructor(private readonly deps: EdgeDeps) {
    this.metrics = new HttpMetrics(deps.metrics);
    this.budgets = new Budgets(deps, this.metrics, deps.metrics);
    this.conditional = new Conditional(this.budgets);
  }

  add(routes: Route[]): void {
    for (const route of routes) {
      this.router.add(route);
      this.compiled.set(route, {
        params: route.params ? compile(route.params, 'path') : null,
        query: route.query ? compile(route.query, 'query') : null,
        body:
          route.body && route.bodyKind !== 'form'
            ? compile(route.body, 'body', route.indexedList)
            : null,
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

  /**
   * The cap the transport enforces while reading a body for this request: FORM_BODY_BYTES for a
   * form; for a route that takes no body, none at all (a body is refused, 413) on reads and on
   * routes without a credential, and IGNORED_BODY_BYTES on a credential's actions (start,
   * publish, a DELETE), where clients that always send `{}` are common and harmless.
   */
  bodyLimit(match: Match): number {
    if (match.kind !== 'found') return this.deps.maxBodyBytes;
    const { route } = match;
    const kind = bodyKindOf(route);
    if (kind === 'none')
      return route.auth === 'bearer' && route.method !== 'GET' ? IGNORED_BODY_BYTES : 0;
    return route.maxBodyBytes ?? (kind === 'form' ? FORM_BODY_BYTES : this.deps.maxBodyBytes);
  }

  /**
   * Decides a request from its head alone: the route, the credential, the rate budget and
   * access (and a route's own check, such as a storage quota). The transport calls it before
   * it keeps any byte of a body: a request refused here is answered at once and its body
   * dropped. `handle` then takes the admission along with the body.
   */
  async admit(head: RequestHead, match: Match): Promise<Verdict> {
    const started = performance.now();
    const requestId = requestIdOf(head.headers);
    const headers: Record<string, string> = { 'X-Request-Id': requestId };
    try {
      const route = found(head, match);
      const admitted = await this.admission(
        route,
        match.kind === 'found' ? match.params : {},
        head,
        requestId,
        headers,
        started,
      );
      if (route.beforeBody)
        await route.beforeBody({
          principal: admitted.principal,
          params: match.kind === 'found' ? match.params : {},
          headers: head.headers,
        });
      return { admitted };
    } catch (error) {
      const response = this.writable(
        this.failure(error, headers, head, requestId, this.rendererOf(match, head.path)),
        head,
        requestId,
      );
      this.observe(head, match, response, started, requestId);
      return { refused: response, error: toDomainError(error) };
    }
  }

  /** A WebSocket upgrade, before its endpoint judges it, spends its address's budget: the refusal, or null. */
  enterUpgrade(head: RequestHead): OutgoingResponse | null {
    return this.refusing(head, () => void this.budgets.spendAddress(head));
  }

  /**
   * An upgrade accepted without its credential (it comes in the first message) takes a place
   * among its address's upgrades waiting for one; `leave` gives it back (authenticated, or gone).
   */
  awaitCredential(head: RequestHead): { leave: () => void } | { refused: OutgoingResponse } {
    let leave: () => void = () => {};
    const refused = this.refusing(head, () => void (leave = this.budgets.holdPendingUpgrade(head)));
    return refused ? { refused } : { leave };
  }

  /** Runs a check of the head; what it throws, as the answer. */
  private refusing(head: RequestHead, check: () => void): OutgoingResponse | null {
    try {
      check();
      return null;
    } catch (error) {
      const requestId = requestIdOf(head.headers);
      return this.failure(error, { 'X-Request-Id': requestId }, head, requestId, null);
    }
  }

  async handle(
    request: IncomingRequest,
    match: Match = this.match(request.method, request.path),
    admitted?: Admission,
  ): Promise<OutgoingResponse> {
    const started = admitted?.started ?? performance.now();
    const requestId = admitted?.requestId ?? requestIdOf(request.headers);
    const headers: Record<string, string> = admitted?.headers ?? { 'X-Request-Id': requestId };
    let response: OutgoingResponse;
    try {
      const route = found(request, match);
      const admission =
        admitted ??
        (await this.admission(
          route,
          match.kind === 'found' ? match.params : {},
          request,
          requestId,
          headers,
          started,
        ));
      response = await this.dispatch(
        route,
        match.kind === 'found' ? match.params : {},
        request,
        admission,
      );
    } catch (error) {
      const route = match.kind === 'found' ? match.route : null;
      const counted = route?.failedCredentials
        ? this.budgets.failedCredential(error, request, route.failedCredentials)
        : error;
      response = this.failure(
        counted,
        headers,
        request,
        requestId,
        this.rendererOf(match, request.path),
      );
    }
    response = this.writable(response, request, requestId);
    this.observe(request, match, response, started, requestId);
    return response;
  }

  /**
   * The answer, if a transport can write it as it is (writable.ts); else the 500 in the
   * envelope, its cause logged with the request id. Checked here, before any byte is out, so
   * that neither transport is handed what it would throw on or write unchecked.
   */
  private writable(
    response: OutgoingResponse,
    head: RequestHead,
    requestId: string,
  ): OutgoingResponse {
    const problem = unwritable(response);
    if (problem === null) return response;
    return this.failure(
      new Error(`unwritable answer: ${problem}`),
      { 'X-Request-Id': requestId },
      head,
      requestId,
      null,
    );
  }

  /**
   * A transport could not write an answer (past the check above: a stream's opener or a later
   * write threw): logged with its request id; the transport ends that one connection.
   */
  unsent(error: unknown, response: OutgoingResponse): void {
    this.deps.log.error(
      { err: error, requestId: response.headers['X-Request-Id'], status: response.status },
      'answer not written: connection closed',
    );
  }

  private observe(
    head: RequestHead,
    match: Match,
    response: OutgoingResponse,
    started: number,
    requestId: string,
  ): void {
    const seconds = (performance.now() - started) / 1000;
    this.metrics.observeRequest(
      head.method,
      match.kind === 'found' ? match.route.path : 'unmatched',
      response.status,
      seconds,
    );
    if (response.status >= 500) {
      this.deps.log.warn(
        { requestId, method: head.method, path: head.path, status: response.status },
        'request failed',
      );
    } else {
      this.deps.log.debug(
        {
          requestId,
          method: head.method,
          path: head.path,
          status: response.status,
          ms: seconds * 1000,
        },
        'request',
      );
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
    let budgetWorkspaceId: string | null = null;
    if (route.auth === 'bearer') {
      headers['Vary'] = 'Authorization';
      try {
        principal = await this.deps.auth.authenticate(head.headers['authorization']);
      } catch (error) {
        throw this.budgets.failedCredential(error, head);
      }
      rateKey = principal.userId
        ? `${principal.credentialId}:${principal.userId}`
        : principal.credentialId;
      budgetWorkspaceId = principal.workspaceId;
      const leasing = this.budgets.spendCredential(rateKey, headers);
      if (leasing) await leasing;
      if (route.guest && principal.userId && rawParams.flowId)
        principal = await this.deps.auth.asGuest(principal, rawParams.flowId, route.guest);
      authorize(route, principal);
    } else if (route.rateLimit === 'address') {
      rateKey = this.budgets.spendAddress(head);
    }
    return { principal, rateKey, budgetWorkspaceId, requestId, headers, started };
  }

  /** Not async on purpose: the common path hands back respond's promise without another frame to settle. */
  private dispatch(
    route: Route,
    rawParams: Record<string, string>,
    request: IncomingRequest,
    admission: Admission,
  ): Promise<OutgoingResponse> {
    const compiled = this.compiled.get(route)!;
    const params = compiled.params ? compiled.params(rawParams) : rawParams;
    const queryObject = parseQuery(request.query);
    const query = compiled.query ? compiled.query(queryObject) : queryObject;
    const body = readBody(route, request, compiled.body);
    if (route.bodyKind !== 'upload')
      return this.respond(route, request, admission, { params, query, body, upload: null });
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
    // The blob's chunks are stored with the workspace the file row will name (issue 36).
    const workspaceId = admission.principal?.workspaceId ?? '';
    const upload = await this.deps.uploads.stage(workspaceId, request.bodySource ?? [request.body]);
    try {
      return await this.respond(route, request, admission, {
        params: input.params,
        query: input.query,
        body: input.body,
        upload,
      });
    } finally {
      await this.deps.uploads.discard(workspaceId, upload.blobId);
    }
  }

  private async respond(
    route: Route,
    request: IncomingRequest,
    admission: Admission,
    input: Pick<RequestContext, 'params' | 'query' | 'body' | 'upload'>,
  ): Promise<OutgoingResponse> {
    const { principal, rateKey, budgetWorkspaceId, requestId, headers } = admission;
    const budget =
      rateKey && budgetWorkspaceId ? { rateKey, workspaceId: budgetWorkspaceId } : null;
    const parentLog = this.deps.log;
    let log: Logger | null = null;
    // Listed, not spread: a spread ahead of the getter takes V8 off the literal's fast path
    // (bench:http lost a third of its requests a second to this object).
    const ctx: RequestContext = {
      params: input.params,
      query: input.query,
      body: input.body,
      upload: input.upload,
      rawBody: request.body,
      headers: request.headers,
      principal,
      remoteAddress: request.remoteAddress,
      requestId,
      // Most requests never log: build the child logger only when one does.
      get log() {
        return (log ??= parentLog.child({ requestId }));
      },
    };
    const ifNoneMatch = request.method === 'GET' ? request.headers['if-none-match'] : undefined;

    const msgpack = this.conditional.wanted(request.method, request.headers['accept']);
    if (ifNoneMatch && route.etag) {
      const notModified = await this.conditional.early(
        route,
        ctx,
        ifNoneMatch,
        msgpack,
        headers,
        rateKey,
      );
      if (notModified) return notModified;
    }
    const representation = msgpack
      ? {
          type: msgpack,
          key: `${principal ? principalKey(principal) : ''} ${request.path}?${request.query}`,
        }
      : null;

    const idempotencyKey =
      request.method === 'POST' && principal ? request.headers['idempotency-key'] : undefined;
    if (idempotencyKey !== undefined && principal) {
      const content = input.upload
        ? `upload ${input.upload.sha256}`
        : request.body.toString('base64');
      return await idempotent(
        this.deps.idempotencyKeys,
        principalKey(principal),
        idempotencyKey,
        request,
        content,
        headers,
        () => this.run(route, ctx, headers, ifNoneMatch, rateKey, budget, null),
        (error) => this.failure(error, headers, request, requestId, null),
      );
    }
    // Awaited, not returned: an async function that returns a promise settles two ticks later.
    return await this.run(route, ctx, headers, ifNoneMatch, rateKey, budget, representation);
  }

  private async run(
    route: Route,
    ctx: RequestContext,
    headers: Record<string, string>,
    ifNoneMatch: string | undefined,
    rateKey: string | null,
    /** What a costly request's rest spends: its credential's budget and its workspace's. */
    budget: { rateKey: string; workspaceId: string } | null,
    /** MessagePack asked for (GET): its type, and the key its bytes are cached under with the tag. */
    representation: Representation | null,
  ): Promise<OutgoingResponse> {
    if (route.cost && budget) {
      const more = (await route.cost(ctx)) - 1;
      if (more > 0) await this.budgets.spendMore(budget.rateKey, budget.workspaceId, more, headers);
    }
    const reply = await route.handler(ctx);
    Object.assign(headers, reply.headers);
    const cookies = reply.cookies;
    if (reply.stream)
      return {
        status: reply.status,
        headers: { ...headers, 'Content-Type': reply.contentType ?? 'application/octet-stream' },
        body: null,
        stream: reply.stream,
      };
    if (reply.status === 204 || reply.body === undefined)
      return { status: reply.status, headers, body: null, cookies };
    const isBytes = Buffer.isBuffer(reply.body);
    let payload: string | Buffer = isBytes ? (reply.body as Buffer) : JSON.stringify(reply.body);
    headers['Content-Type'] =
      reply.contentType ?? (isBytes ? 'application/octet-stream' : JSON_TYPE);
    if (route.method === 'GET' && reply.status === 200) {
      const tagged = this.conditional.tagged(
        route,
        reply,
        payload,
        headers,
        ifNoneMatch,
        rateKey,
        representation,
      );
      if (typeof tagged !== 'string' && !Buffer.isBuffer(tagged)) return tagged;
      payload = tagged;
    }
    return { status: reply.status, headers, body: payload, cookies };
  }

  /**
   * Paths under `prefix` that match no route (or not with their method) are refused as its
   * pages refuse (`renderError`: an HTML page with a way home), not in the API's envelope.
   * An app mounted at the root shares its paths with the API: there the envelope stays.
   */
  pagesUnder(prefix: string, renderError: NonNullable<Route['renderError']>): void {
    if (prefix !== '') this.pages = { prefix, renderError };
  }

  /** What renders a refusal of this request: its route's page, the pages' under their prefix, or the envelope. */
  private rendererOf(match: Match, path: string): Pick<Route, 'renderError'> | null {
    if (match.kind === 'found') return match.route;
    const pages = this.pages;
    return pages && (path === pages.prefix || path.startsWith(`${pages.prefix}/`)) ? pages : null;
  }

  private failure(
    error: unknown,
    headers: Record<string, string>,
    request: RequestHead,
    requestId: string,
    route: Pick<Route, 'renderError'> | null,
  ): OutgoingResponse {
    return failureResponse(this.deps.log, error, headers, request, requestId, route);
  }
}

/** The matched route, or the 404 / 405 its absence answers. */
function found(head: RequestHead, match: Match): Route {
  if (match.kind === 'none') throw new DomainError('NOT_FOUND', `No route for ${head.path}`);
  if (match.kind === 'method') {
    throw new DomainError(
      'METHOD_NOT_ALLOWED',
      `${head.method} is not allowed here`,
      { allow: match.allow },
      { allow: match.allow },
    );
  }
  return match.route;
}

/** Plan, scope and role, in that order, before any handler runs. */
/** What the head decides for a route (the web app asks the same of its form posts). */
export function authorize(
  route: Pick<Route, 'method' | 'scopes' | 'write' | 'minRole' | 'freePlan'>,
  principal: Principal,
): void {
  if (principal.plan === 'free' && !route.freePlan) {
    throw new DomainError('PLAN_REQUIRED', 'API access needs the pro plan', {
      plan: principal.plan,
    });
  }
  const missing = (route.scopes ?? []).filter((scope) => !principal.scopes.includes(scope));
  if (missing.length > 0) {
    throw insufficientScope(route.scopes ?? [], missing);
  }
  const write = route.write ?? route.method !== 'GET';
  if (write && principal.role === 'viewer') {
    throw new DomainError('FORBIDDEN', 'A viewer credential cannot make changes', {
      role: principal.role,
    });
  }
  if (route.minRole && !roleAtLeast(principal.role, route.minRole)) {
    throw roleRequired(route.minRole, principal.role);
  }
  if (write && principal.pastDue) {
    throw new DomainError(
      'SUBSCRIPTION_PAST_DUE',
      'The subscription is past due: changes are refused until it is paid',
    );
  }
}
