/**
 * The event feed and streams: an Event is exactly a webhook payload (type, timestamp,
 * workspaceId, data) plus its `id` and `cursor` (positions in the event log, numbered per
 * workspace, sealed for the credential's audience: opaque to clients, pass it back as `after` or `Last-Event-ID`).
 */
import { Type } from '@sinclair/typebox';
import { dateTime, Defaulted, StringEnum } from './common.schema.ts';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.schema.ts';

const cursor = Type.String({
  pattern: '^[A-Za-z0-9_-]+$',
  minLength: 22,
  maxLength: 4096,
  description:
    "Opaque: where you are in the events you may see, as this API gave it to this credential (a person's to that person); another's cursor is refused. 22 characters for a key or a client; a person's is longer, growing with the workspaces whose flows they read",
});

export const EventSchema = Type.Object({
  id: Type.String({
    pattern: '^evt_[A-Za-z0-9_-]{22}$',
    description:
      'The event (`evt_…`, opaque): the same in the feed and the streams for the same credential (a person token: the same person)',
  }),
  cursor,
  type: StringEnum(WEBHOOK_EVENT_TYPES),
  timestamp: dateTime,
  workspaceId: Type.String(),
  data: Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: true,
    description: 'As in the webhook of this type',
  }),
});

export const EventPageSchema = Type.Object({
  items: Type.Array(EventSchema),
  next: Type.String({
    description: 'The cursor to read after next time (also when `items` is empty)',
  }),
  hasMore: Type.Boolean({ description: 'More events are there already: read again at once' }),
});

const filters = {
  types: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: `Comma list of event types (default: all): ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    }),
  ),
  flowId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "Only this flow's events" }),
  ),
};

export const EventFeedQuery = Type.Object({
  after: Type.Optional({
    ...cursor,
    description:
      'Read after this cursor; without it, no items and the cursor of now (list, then follow)',
  }),
  size: Defaulted(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  ...filters,
  wait: Defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 30,
      default: 0,
      description: 'Seconds to wait for a first event when there is none yet (long poll)',
    }),
  ),
});

export const EventStreamQuery = Type.Object({
  after: Type.Optional({
    ...cursor,
    description:
      'Resume after this cursor (`Last-Event-ID` takes precedence); without either, from now',
  }),
  ...filters,
});
