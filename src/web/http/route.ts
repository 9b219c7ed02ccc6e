/**
 * A route is data: method, path, the scope and least role the edge checks before any
 * handler runs, the schemas it validates with (also the OpenAPI document's), and a thin
 * handler that receives typed input and returns a reply.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal, Role, Scope } from '../../services/auth/principal.ts';
import type { Logger } from 'pino';
import type { DomainError, ErrorCode } from '../../platform/errors.ts';
import type { StagedBlob } from '../../services/files/files.service.ts';
import type { StreamOpener } from './request.ts';
import type { Schema } from '../../contract/common.schema.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A reply as bytes the handler built (a page, a file, JSON serialised ahead for speed), or
 * none (204/304). A JSON value goes through `json()`, typed by the route's schema.
 */
export interface Reply {
  status: number;
  /** Sent as is, with `contentType`. */
  body?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Strong validator of the representation; GET replies without one get a hash of the body. */
  etag?: string;
  /** `Set-Cookie` values, one header each (the web app's session and CSRF cookies). */
  cookies?: string[];
  /** A body written over time (Server-Sent Events), with `contentType`: no `body`, no ETag. */
  stream?: StreamOpener;
}

/**
 * What the handler receives. `route()` narrows it from the route's own schemas: `params`,
 * `query` and `body` are their static types, and `principal` is non-null on bearer routes.
 */
export interface RequestContext<
  P = Record<string, string>,
  Q = Record<string, unknown>,
  B = unknown,
  Who extends Principal | null = Principal | null,
  Upload extends StagedBlob | null = StagedBlob | null,
> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** The unparsed body, for routes that take bytes or forms. */
  readonly rawBody: Buffer;
  /** An upload route's body, already written to storage as it arrived (`bodyKind: 'upload'`). */
  readonly upload: Upload;
  readonly headers: Readonly<Record<string, string>>;
  readonly principal: Who;
  /** The client's IP address as the socket saw it (per-address rate limits, sign-in throttling). */
  readonly remoteAddress: string;
  readonly requestId: string;
  readonly log: Logger;
}

/** `upload`: raw bytes streamed to storage as they arrive, never held whole (ctx.upload). */
export type BodyKind = 'json' | 'form' | 'bytes' | 'upload' | 'none';

/** What a route takes as its body: its `bodyKind`, else JSON when it has a body schema, else none. */
export const bodyKindOf = (route: Pick<Route, 'bodyKind' | 'body'>): BodyKind =>
  route.bodyKind ?? (route.body ? 'json' : 'none');

export interface ResponseSpec {
  description: string;
  schema?: Schema;
  /** Several for a response that comes in more than one media type (exports: PDF or PNG). */
  contentType?: string | readonly string[];
}

export type Auth = 'bearer' | 'none';

/** Everything of a route but its schemas, credential and the functions that take the request. */
export interface RouteOptions {
  method: Method;
  /** `/v1/flows/{flowId}`: OpenAPI-style placeholders are the path parameters. */
  path: string;
  operationId: string;
  summary: string;
  tags?: readonly string[];
  /** Scopes the credential must all hold; empty for any valid credential. */
  scopes?: readonly Scope[];
  minRole?: Role;
  /** Defaults to method !== GET; a read over POST (exports) sets false. */
  write?: boolean;
  /** Allowed on the free plan (only GET /v1/me). */
  freePlan?: boolean;
  /**
   * `address`: a budget per client address, apart from the credentials' (public views, the
   * web app, the token endpoint). Bearer routes always spend the credential's budget.
   */
  rateLimit?: 'address';
  /** Left out of the OpenAPI document (the web app's unversioned pages, spec §9.3). */
  hidden?: boolean;
  /**
   * A flow route (`{flowId}`) a guest may use with a person token: `read` for a share's viewer
   * and commenter, `comment` for a commenter only. Other flow routes stay 404 to guests.
   */
  guest?: 'read' | 'comment';
  /** Renders a refusal for a non-JSON client (an HTML page); the envelope otherwise. */
  renderError?: (error: DomainError) => Reply;
  /**
   * The pointer of a list in the body whose items are judged one by one (`/commands`): a
   * refusal of the body names the first failing item's position as `details.index`.
   */
  indexedList?: string;
  /** Body is optional (exports); an empty body validates as `{}`. */
  bodyOptional?: boolean;
  /** Larger cap for this route's body, in bytes (attachments). */
  maxBodyBytes?: number;
  responses: Record<number, ResponseSpec>;
  /** Refusals this route raises beyond those the edge adds (for the OpenAPI document). */
  errors?: ErrorCode[];
  /**
   * Refusals of a route without a bearer that mean a secret it was given did not check out
   * (a client secret, an authorization code, a refresh token): each spends the client
   * address's failed-credential budget, as a bad bearer does, and once it is spent they are 429.
   */
  failedCredentials?: readonly ErrorCode[];
}

/**
 * A route as the edge, the router and the OpenAPI document hold it: schemas as plain JSON
 * Schema values, and a context of whatever shape. Build one with `route()` to have its
 * handler typed from its own schemas.
 */
export interface Route extends RouteOptions {
  /** `none`: no credential (token endpoint, health, openapi). */
  auth: Auth;
  params?: Schema;
  query?: Schema;
  bodyKind?: BodyKind;
  body?: Schema;
  // Methods, not properties: a handler typed for its own route's context still fits here.
  /** A cheap validator (a version) checked against If-None-Match before the handler runs. */
  etag?(ctx: RequestContext): Promise<string | null> | string | null;
  /**
   * Tokens of the credential's rate budget the request costs in all, for a route whose work
   * grows with what it is asked (a forecast, a command list): the one every request spends, and
   * the rest spent before the handler runs from the credential's budget and its workspace's,
   * all or none (a 429 when either lacks them). Not spent on a 304.
   */
  cost?(ctx: RequestContext): Promise<number> | number;
  handler(ctx: RequestContext): Promise<AnyReply> | AnyReply;
  /**
   * A refusal the head alone decides, checked before any byte of the body is read (a storage
   * quota against the declared Content-Length): throws a DomainError to refuse.
   */
  beforeBody?(head: BeforeBodyHead): Promise<void> | void;
}

/** What `beforeBody` sees: the request before its body, past the credential checks. */
export interface BeforeBodyHead<Who extends Principal | null = Principal | null> {
  principal: Who;
  params: Readonly<Record<string, string>>;
  headers: Readonly<Record<string, string>>;
}

/** The principal a route's handler sees: there is always one past a bearer route's checks. */
export type PrincipalOf<A extends Auth> = A extends 'bearer' ? Principal : Principal | null;

/** The value a schema validates to; `Otherwise` without a schema (what the edge passes on unchecked). */
type Input<S, Otherwise> = S extends TSchema ? Static<S> : Otherwise;

/**
 * The body as the edge hands it on: a form parsed to strings (checked by its handler; its
 * schema only documents it), nothing for raw bytes, an upload or no body, else the value of
 * the body schema (JSON without a schema is not validated).
 */
type BodyOf<B, K> = K extends 'form'
  ? Record<string, string>
  : K extends 'bytes' | 'upload' | 'none'
    ? undefined
    : B extends TSchema
      ? Static<B>
      : [B, K] extends [undefined, undefined]
        ? undefined
        : unknown;

/**
 * What a handler may answer with a status of its route's `responses`: for a status with a
 * schema, a JSON body of that schema's static type, or bytes already serialised (pre-assembled
 * JSON, a file, a page); for one without, any body. A status the route does not list is a
 * type error, like a body that misses a required field of its schema.
 */
export type ReplyOf<R> =
  | Reply
  | {
      [S in keyof R & number]: JsonReply<
        S,
        R[S] extends { schema: infer X extends TSchema } ? Static<X> : unknown
      >;
    }[keyof R & number];

/** A JSON reply: `body` is serialised by the edge. */
export interface JsonReply<S extends number = number, T = unknown> extends Omit<
  Reply,
  'status' | 'body'
> {
  status: S;
  body: T;
}

/** Whatever a handler answers, as the edge sends it. */
export type AnyReply = Reply | JsonReply;

/** The context of a route with these schemas, body kind and credential. */
export type ContextOf<P, Q, B, K, A extends Auth> = RequestContext<
  Input<P, Record<string, string>>,
  Input<Q, Record<string, unknown>>,
  BodyOf<B, K>,
  PrincipalOf<A>,
  K extends 'upload' ? StagedBlob : null
>;

/** A route as written in a route table: its handler's context follows from its schemas. */
export interface RouteSpec<
  P,
  Q,
  B,
  K extends BodyKind | undefined,
  A extends Auth,
  R extends Record<number, ResponseSpec> = Record<number, ResponseSpec>,
> extends Omit<RouteOptions, 'responses'> {
  /** `none`: no credential (token endpoint, health, openapi). */
  auth: A;
  responses: R;
  params?: P;
  query?: Q;
  bodyKind?: K;
  body?: B;
  // NoInfer: the schemas decide the context, never a handler built elsewhere (a helper's generic).
  /** A cheap validator (a version) checked against If-None-Match before the handler runs. */
  etag?: (ctx: NoInfer<ContextOf<P, Q, B, K, A>>) => Promise<string | null> | string | null;
  /** Tokens of the rate budget the request costs in all (see Route). */
  cost?: (ctx: NoInfer<ContextOf<P, Q, B, K, A>>) => Promise<number> | number;
  handler: (
    ctx: NoInfer<ContextOf<P, Q, B, K, A>>,
  ) => Promise<NoInfer<ReplyOf<R>>> | NoInfer<ReplyOf<R>>;
  /**
   * A refusal the head alone decides, checked before any byte of the body is read (a storage
   * quota against the declared Content-Length): throws a DomainError to refuse.
   */
  beforeBody?: (head: NoInfer<BeforeBodyHead<PrincipalOf<A>>>) => Promise<void> | void;
}

/**
 * Defines a route, inferring its handler's context: `ctx.params`, `ctx.query` and `ctx.body`
 * are the static types of the TypeBox schemas given (what the edge validated them against),
 * and `ctx.principal` is non-null when `auth` is `bearer`.
 */
export function route<
  A extends Auth,
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | Schema | undefined = undefined,
  K extends BodyKind | undefined = undefined,
  const R extends Record<number, ResponseSpec> = Record<number, ResponseSpec>,
>(spec: RouteSpec<P, Q, B, K, A, R>): Route;
// The edge hands the handler what it validated against these very schemas, so the route's own
// context is the one it gets: the signature above is what ties the two together.
export function route(spec: Route): Route {
  return spec;
}

export const json = <const S extends number, T>(
  status: S,
  body: T,
  extra: Omit<Reply, 'status' | 'body'> = {},
): JsonReply<S, T> => ({
  ...extra,
  status,
  body,
});

export const noContent = (): Reply => ({ status: 204 });
