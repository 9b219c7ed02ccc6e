/** Webhook endpoints and deliveries (CONTRACT §3). */
import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.schema.ts';
import {
  dateTime,
  idParam,
  listOf,
  Nullable,
  pageQuery,
  pathParams,
  StringEnum,
  freeText,
} from './common.schema.ts';

export const MAX_URL_LENGTH = 2048;

const eventType = StringEnum(WEBHOOK_EVENT_TYPES);
const url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description:
    'Where events are POSTed: an absolute http or https URL without credentials or fragment. Its host must resolve to public ' +
    'addresses only (not loopback, private, link-local, metadata…), checked now and again before every delivery; ' +
    'otherwise 400 VALIDATION_FAILED (unless the server runs with WEBHOOK_ALLOW_PRIVATE=1)',
});
const events = Type.Array(eventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types to deliver',
});
const description = Nullable(freeText(500));

export const WebhookParams = pathParams({ webhookId: idParam('whk') });
export const DeliveryParams = pathParams({ webhookId: idParam('whk'), deliveryId: idParam('msg') });
export const WebhooksQuery = Type.Object(pageQuery(), { additionalProperties: false });

export const CreateWebhookBody = Type.Object(
  { url, events, description: Type.Optional(description) },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Any of the fields; omitted ones keep their value. `enabled` true switches an endpoint back on (also after a 410 disabled it).',
  },
);

const webhookProperties = {
  id: Type.String({ description: '`whk_…`' }),
  url: Type.String({
    description:
      'Whole only to a credential that may change the endpoint (role admin and scope flows:write); anyone else, ' +
      'an admin key with flows:read only too, sees the scheme, host and port, and `/…` for the path and query that follow ' +
      '(e.g. `https://hooks.example.com/…`), since URLs often carry a token there',
  }),
  events: Type.Array(eventType),
  description: Nullable(Type.String()),
  enabled: Type.Boolean({
    description: 'False: nothing is delivered (new events are not queued; queued ones are skipped)',
  }),
  disabledReason: Type.Unsafe<'gone' | null>({
    type: ['string', 'null'],
    enum: ['gone', null],
    description: '`gone`: the service switched it off because the receiver answered 410 Gone',
  }),
  previousSecretExpiresAt: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'After a rotation: until then deliveries are also signed with the previous secret',
    }),
  ),
  circuit: Type.Object(
    {
      state: StringEnum(['closed', 'open', 'half-open'], {
        description:
          '`open`: the endpoint timed out WEBHOOK_BREAKER_TIMEOUTS times in a row, so its deliveries wait (not failed) until `until`; ' +
          '`half-open`: after that, one attempt at a time with the shorter WEBHOOK_BREAKER_TIMEOUT_SECONDS, until an answer closes it (another timeout opens it again)',
      }),
      consecutiveTimeouts: Type.Integer({
        minimum: 0,
        description: 'Attempts in a row that got no answer within the timeout',
      }),
      until: Nullable(
        Type.String({
          format: 'date-time',
          description: 'When the cool-down ends (ended, when half-open); null when closed',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'The circuit breaker that keeps an endpoint that stopped answering from holding up deliveries',
    },
  ),
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const WebhookSchema = Type.Object(webhookProperties);

export const WebhookWithSecretSchema = Type.Object({
  ...webhookProperties,
  secret: Type.String({
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description:
      'Shown once. `whsec_` + base64 of 32 random bytes; the HMAC-SHA256 key is the decoded bytes (Standard Webhooks 1.0)',
  }),
});

export const WebhooksSchema = listOf(WebhookSchema);

const attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  manual: Type.Boolean({ description: 'Made by a manual retry' }),
  startedAt: dateTime,
  durationMs: Type.Integer({ minimum: 0 }),
  statusCode: Nullable(
    Type.Integer({
      description:
        "The receiver's HTTP status; null when no answer came (refused address, connection error, timeout)",
    }),
  ),
  error: Nullable(Type.String()),
  retryAfter: Nullable(
    Type.Integer({ description: 'Seconds the receiver asked to wait (Retry-After)' }),
  ),
});

export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'The `webhook-id` header: the same on every attempt (`msg_…`)' }),
  webhookId: Type.String(),
  eventType: eventType,
  flowId: Nullable(Type.String()),
  status: StringEnum(['pending', 'sending', 'delivered', 'failed', 'skipped'], {
    description:
      '`pending`: waiting for its next attempt (`nextAttemptAt`) or, with no time, for an earlier event of the same flow to this ' +
      'endpoint; `delivered`: a 2xx answer; `failed`: given up (attempts used up, or 410 Gone); `skipped`: the endpoint was disabled',
  }),
  attempts: Type.Integer({ minimum: 0 }),
  nextAttemptAt: Nullable(Type.String({ format: 'date-time' })),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  createdAt: dateTime,
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  payload: Type.Optional(
    Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      description:
        'The body sent, byte for byte the same on every attempt; absent once the event is past its retention',
    }),
  ),
  attemptLog: Type.Array(attempt, { description: 'The latest 20 attempts, oldest first' }),
});

export const DeliveriesSchema = listOf(DeliverySchema);
