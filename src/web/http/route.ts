/**
 * A route is data: method, path, the scope and least role the edge checks before any
 * handler runs, the schemas it validates with (also the OpenAPI document's), and a thin
 * handler that receives typed input and returns a reply.
 */
import type { Principal, Role, Scope } from '../../services/auth/principal.ts';
import type { Logger } from 'pino';
import type { ApiError, ErrorCode } from '../../platform/errors.ts';
import type { StagedBlob } from '../../services/files/files.service.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A JSON schema object (ajv draft 2020-12 dialect, as OpenAPI 3.1 uses). */
export type Schema = Record<string, unknown>;

export interface Reply {
  status: number;
  /** JSON body; omitted for 204/304. A Buffer is sent as-is with `contentType`. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Strong validator of the representation; GET replies without one get a hash of the body. */
  etag?: string;
  /** `Set-Cookie` values, one header each (the web app's session and CSRF cookies). */
  cookies?: string[];
}

export interface RequestContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** The unparsed body, for routes that take bytes or forms. */
  readonly rawBody: Buffer;
  /** An upload route's body, already written to storage as it arrived (`bodyKind: 'upload'`). */
  readonly upload: StagedBlob | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly principal: Principal | null;
  /** The client's IP address as the socket saw it (per-address rate limits, sign-in throttling). */
  readonly remoteAddress: string;
  readonly requestId: string;
  readonly log: Logger;
}

/** `upload`: raw bytes streamed to storage as they arrive, never held whole (ctx.upload). */
export type BodyKind = 'json' | 'form' | 'bytes' | 'upload' | 'none';

export interface ResponseSpec {
  description: string;
  schema?: Schema;
  /** Several for a response that comes in more than one media type (exports: PDF or PNG). */
  contentType?: string | readonly string[];
}

export interface Route<P = any, Q = any, B = any> {
  method: Method;
  /** `/v1/flows/{flowId}`: OpenAPI-style placeholders are the path parameters. */
  path: string;
  operationId: string;
  summary: string;
  tags?: readonly string[];
  /** `none`: no credential (token endpoint, health, openapi). */
  auth: 'bearer' | 'none';
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
  renderError?: (error: ApiError) => Reply;
  params?: Schema;
  query?: Schema;
  bodyKind?: BodyKind;
  body?: Schema;
  /** Body is optional (exports); an empty body validates as `{}`. */
  bodyOptional?: boolean;
  /** Larger cap for this route's body, in bytes (attachments). */
  maxBodyBytes?: number;
  /**
   * A refusal the head alone decides, checked before any byte of the body is read (a storage
   * quota against the declared Content-Length): throws an ApiError to refuse.
   */
  beforeBody?: (head: { principal: Principal | null; params: Readonly<Record<string, string>>; headers: Readonly<Record<string, string>> }) => Promise<void> | void;
  responses: Record<number, ResponseSpec>;
  /** Refusals this route raises beyond those the edge adds (for the OpenAPI document). */
  errors?: ErrorCode[];
  /** A cheap validator (a version) checked against If-None-Match before the handler runs. */
  etag?: (ctx: RequestContext<P, Q, B>) => Promise<string | null> | string | null;
  handler: (ctx: RequestContext<P, Q, B>) => Promise<Reply> | Reply;
}

export const json = (status: number, body: unknown, extra: Partial<Reply> = {}): Reply => ({
  status,
  body,
  ...extra,
});

export const noContent = (): Reply => ({ status: 204 });
