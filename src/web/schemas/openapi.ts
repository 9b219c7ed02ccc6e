/**
 * The OpenAPI 3.1 document, built from the route table: the same schema objects the edge
 * validates with, so the document cannot drift from what the server enforces.
 */
import { dateTime, ErrorSchema, type Schema } from '../../contract/common.schema.ts';
import { SCOPES } from '../../contract/vocabulary.ts';
import { WEBHOOK_EVENTS } from '../../contract/webhook-events.schema.ts';
import { DomainError, type ErrorCode } from '../../platform/errors.ts';
import { HTTP_STATUS } from '../http/error-status.ts';
import { MSGPACK_TYPES } from '../http/msgpack.ts';
import type { Route } from '../http/route.ts';

export const SCOPE_TEXT: Record<string, string> = {
  'flows:read': 'Read flows, tasks, schedules and reports',
  'flows:write': 'Create and change flows and tasks',
  'work:write': 'Start, complete, assign and comment on work',
  'team:read': 'Read members and invitations',
  'team:write': 'Invite people and change roles',
  'templates:read': 'Read templates and start flows from them',
  'notifications:read': 'Read what people are emailed about',
  'notifications:write': 'Change what people are emailed about',
};

/** The codes each status may carry on a route, for the error responses of the document. */
function errorCodesFor(route: Route): Map<number, ErrorCode[]> {
  const codes = new Map<number, ErrorCode[]>();
  const add = (code: ErrorCode) => {
    const status = HTTP_STATUS[code];
    codes.set(status, [...(codes.get(status) ?? []), code]);
  };
  if (route.params || route.auth === 'bearer') add('NOT_FOUND');
  if (route.query || route.body || route.params) add('VALIDATION_FAILED');
  if (route.bodyKind !== 'form' && route.body) add('UNSUPPORTED_MEDIA_TYPE');
  if (route.body) add('PAYLOAD_TOO_LARGE');
  if (route.rateLimit === 'address') add('RATE_LIMITED');
  if (route.auth === 'bearer') {
    for (const code of [
      'UNAUTHORIZED',
      'CREDENTIAL_REVOKED',
      'FORBIDDEN',
      'INSUFFICIENT_SCOPE',
      'RATE_LIMITED',
    ] as const)
      add(code);
    if (!route.freePlan) add('PLAN_REQUIRED');
    if (route.write ?? route.method !== 'GET') add('SUBSCRIPTION_PAST_DUE');
    if (route.method === 'POST') {
      add('IDEMPOTENCY_KEY_IN_USE');
      add('IDEMPOTENCY_KEY_REUSED');
    }
  }
  add('INTERNAL');
  for (const code of route.errors ?? [])
    if (!codes.get(HTTP_STATUS[code])?.includes(code)) add(code);
  return codes;
}

/**
 * The media type a refusal of the route comes in: what its own error renderer answers (the
 * public pages' HTML), asked of the renderer itself; otherwise the JSON envelope.
 */
function errorMediaType(route: Route, code: ErrorCode): string {
  if (!route.renderError) return 'application/json';
  return (route.renderError(new DomainError(code, '…')).contentType ?? 'application/json')
    .split(';')[0]!
    .trim();
}

function parameters(route: Route): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, { 'x-required': checkedByHandler, ...property }] of Object.entries(
      (schema.properties ?? {}) as Record<string, Schema>,
    )) {
      // `x-required`: required of the client, checked by the handler rather than the validator (oauth.schema.ts).
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name) || checkedByHandler === true,
        schema: property,
      });
    }
  }
  return out;
}

function requestBody(route: Route): unknown {
  const kind = route.bodyKind ?? (route.body ? 'json' : 'none');
  if (kind === 'none') return undefined;
  const raw = kind === 'bytes' || kind === 'upload';
  const contentType =
    kind === 'form' ? 'application/x-www-form-urlencoded' : raw ? '*/*' : 'application/json';
  const schema = raw
    ? { type: 'string', contentMediaType: 'application/octet-stream' }
    : route.body;
  return { required: !route.bodyOptional, content: { [contentType]: { schema } } };
}

export function buildOpenApi(routes: readonly Route[], baseUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const types =
        typeof spec.contentType === 'string'
          ? [spec.contentType]
          : [...(spec.contentType ?? ['application/json'])];
      // Every JSON GET also answers MessagePack when Accept asks for it (src/web/http/msgpack.ts).
      if (route.method === 'GET' && status === '200' && types.includes('application/json'))
        types.push(...MSGPACK_TYPES);
      responses[status] =
        spec.schema || spec.contentType
          ? {
              description: spec.description,
              content: Object.fromEntries(
                types.map((type) => [type, { schema: spec.schema ?? {} }]),
              ),
            }
          : { description: spec.description };
    }
    for (const [status, codes] of errorCodesFor(route)) {
      const content: Record<string, { schema: unknown; examples?: unknown }> = {};
      const examples: Record<string, unknown> = {};
      for (const code of codes) {
        const type = errorMediaType(route, code);
        if (type === 'application/json')
          examples[code] = { value: { error: { code, message: '…' } } };
        else content[type] ??= { schema: { type: 'string' } };
      }
      if (Object.keys(examples).length > 0)
        content['application/json'] = { schema: { $ref: '#/components/schemas/Error' }, examples };
      responses[String(status)] = { description: `Error: ${codes.join(', ')}`, content };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      parameters: parameters(route),
      responses,
      'x-min-role': route.minRole ?? (route.auth === 'bearer' ? 'viewer' : undefined),
      security:
        route.auth === 'bearer'
          ? [{ bearer: route.scopes ?? [] }, { oauth2: route.scopes ?? [] }]
          : [],
    };
    const body = requestBody(route);
    if (body) operation.requestBody = body;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'flowplan API',
      version: '1.0.0',
      description:
        'Dependency planning: flows of tasks joined by dependencies, with status, critical path and schedule derived on every read.',
    },
    servers: [{ url: baseUrl }],
    paths,
    // The requests this service sends to registered webhook endpoints (OpenAPI 3.1).
    webhooks: webhooksSection(),
    components: {
      schemas: { Error: ErrorSchema },
      responses: {
        // Answered by the edge for any documented path called with a method it does not have.
        MethodNotAllowed: {
          description:
            'Error: METHOD_NOT_ALLOWED. The path exists but not with this method; `Allow` lists the methods it has.',
          headers: {
            Allow: { description: 'The methods this path answers', schema: { type: 'string' } },
          },
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/Error' },
              examples: {
                METHOD_NOT_ALLOWED: {
                  value: {
                    error: {
                      code: 'METHOD_NOT_ALLOWED',
                      message: '…',
                      details: { allow: ['GET'] },
                    },
                  },
                },
              },
            },
          },
        },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (fpk_…) or an access token (fpa_…)',
        },
        oauth2: {
          type: 'oauth2',
          flows: {
            clientCredentials: {
              tokenUrl: `${baseUrl}/v1/oauth/token`,
              scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXT[s]!])),
            },
            authorizationCode: {
              authorizationUrl: `${baseUrl}/v1/oauth/authorize`,
              tokenUrl: `${baseUrl}/v1/oauth/token`,
              refreshUrl: `${baseUrl}/v1/oauth/token`,
              scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXT[s]!])),
            },
          },
        },
      },
    },
  };
}

/** OpenAPI 3.1 `webhooks`: one operation per event type, describing the request the receiver gets. */
export function webhooksSection(): Record<string, unknown> {
  const headers = {
    'webhook-id': 'The delivery id (`msg_…`): the same on every retry; use it to drop duplicates',
    'webhook-timestamp':
      'Seconds since the epoch when this attempt was signed; refuse old ones (Standard Webhooks suggests 5 minutes)',
    'webhook-signature':
      'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body, keyed by the decoded secret>`; two while a rotated secret overlaps (24 h)',
  };
  return Object.fromEntries(
    WEBHOOK_EVENTS.map(([type, summary, data]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary,
          description:
            'POSTed to each enabled endpoint subscribed to this type (Standard Webhooks 1.0). Only a 2xx answer counts; anything else ' +
            '(a redirect, a timeout after 10 s, a connection error) is retried with growing back-off for more than a day, later if Retry-After asks; ' +
            '410 Gone disables the endpoint. Events of one flow reach an endpoint in the order they were committed.',
          parameters: Object.entries(headers).map(([name, text]) => ({
            name,
            in: 'header',
            required: true,
            description: text,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'workspaceId', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: { ...dateTime, description: 'When the change committed' },
                    workspaceId: { type: 'string' },
                    data,
                  },
                },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received' },
            '410': { description: 'Gone: the endpoint is disabled' },
          },
        },
      },
    ]),
  );
}
