/**
 * The AsyncAPI 3.0 document of the event streams (served at /v1/asyncapi.json): the
 * WebSocket at /v1/stream (JSON or MessagePack frames, one channel each) and the Server-Sent
 * Events at /v1/events/stream (with its `close` frame), each sending the Event of the feed
 * (src/contract/event.schema.ts) for every webhook event type; the bearer credential as
 * security schemes.
 */
import { EventSchema } from '../../contract/event.schema.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS } from '../../contract/webhook-events.schema.ts';
import type { CloseReason } from '../../services/events/subscription.ts';

/** How the server ends a stream, by reason: the WebSocket close code, and the SSE `close` event's data. */
export const STREAM_CLOSE: Record<CloseReason, { code: number; reason: string }> = {
  slow: { code: 4000, reason: 'slow consumer: resume from your cursor' },
  revoked: { code: 4401, reason: 'credential revoked or expired' },
  stopping: { code: 1012, reason: 'server restarting: resume from your cursor' },
  unavailable: {
    code: 1013,
    reason: 'credential could not be checked: try again shortly from your cursor',
  },
};

const plain = (schema: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

export function buildAsyncApi(baseUrl: string): Record<string, unknown> {
  const url = new URL(baseUrl);
  const messages: Record<string, unknown> = {};
  const packed: Record<string, unknown> = {};
  for (const [type, summary, data] of WEBHOOK_EVENTS) {
    const event = plain(EventSchema);
    const properties = event.properties as Record<string, unknown>;
    properties.type = { type: 'string', const: type };
    properties.data = data;
    messages[type.replace('.', '_')] = {
      name: type,
      title: type,
      summary,
      contentType: 'application/json',
      payload: event,
    };
    packed[`${type.replace('.', '_')}_msgpack`] = {
      name: type,
      title: `${type} (MessagePack)`,
      summary: `${summary} One binary frame: the same Event, MessagePack-encoded.`,
      contentType: 'application/vnd.msgpack',
      payload: event,
    };
  }
  const close = {
    close: {
      name: 'close',
      title: 'close',
      summary:
        'The server ends the stream: the SSE event `close`, its data the WebSocket close code and reason the same end would have. ' +
        'Reconnect from your last cursor unless the code is 4401 or 4410; after 1013, retry shortly.',
      contentType: 'application/json',
      payload: {
        type: 'object',
        required: ['code', 'reason'],
        additionalProperties: false,
        properties: {
          code: {
            type: 'integer',
            enum: [...new Set(Object.values(STREAM_CLOSE).map((c) => c.code))],
          },
          reason: { type: 'string' },
        },
      },
    },
  };
  const refsOf = (channel: string, of: Record<string, unknown>) =>
    Object.keys(of).map((key) => ({ $ref: `#/channels/${channel}/messages/${key}` }));
  const filters = {
    after: {
      description:
        "Resume after this cursor (an event's `cursor`, or a feed page's `next`; opaque, valid for the credential it was given to); " +
        "Last-Event-ID takes precedence. Without either: from now. Another credential's cursor is refused (400; first-message WebSocket: 4400).",
    },
    types: {
      description: `Comma list of event types (default all): ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    },
    flowId: { description: "Only this flow's events" },
  };
  const query = {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(filters).map(([k, v]) => [k, { type: 'string', ...v }]),
    ),
  };
  const lastEventId = {
    type: 'string',
    description:
      'The last event id (its cursor) the client saw: resume after it; precedes `after`.',
  };
  const socketBinding = (protocol: string) => ({
    ws: {
      method: 'GET',
      query,
      headers: {
        type: 'object',
        properties: {
          'Sec-WebSocket-Protocol': {
            type: 'string',
            description: `${protocol}, and bearer.<token> (or send {"token": "<token>"} first)`,
          },
          'Last-Event-ID': lastEventId,
        },
      },
    },
  });
  const bearer = [{ $ref: '#/components/securitySchemes/bearer' }];
  const subprotocol = [{ $ref: '#/components/securitySchemes/bearerSubprotocol' }];
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'flowplan event streams',
      version: '1',
      license: { name: 'Proprietary: use governed by your flowplan agreement' },
      description: [
        'Every change to a flow, in the order it committed, as it happens. A stream sends the events after its cursor the credential may read',
        '(flows:read: its workspace; a person also the flows shared with them), first those already in the log, then live.',
        'Each event carries its `cursor`: keep the last one and resume after it on reconnect; nothing is skipped or repeated.',
        'The same events are in `GET /v1/events` (the feed) and in webhook bodies.',
        '',
        'Closes: ' +
          Object.values(STREAM_CLOSE)
            .map((c) => `${c.code} (${c.reason})`)
            .join('; ') +
          '; 4400 (bad first message or query), 4410 (CURSOR_EXPIRED: the cursor is past retention, start again from `GET /v1/events`).',
        "A client whose unsent bytes pass the server's limit (STREAM_MAX_BUFFERED_BYTES) is closed with 4000 rather than buffered without end.",
      ].join('\n'),
    },
    servers: {
      api: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        description: 'The flowplan API',
        security: [...subprotocol, ...bearer],
      },
      sse: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'https' : 'http',
        description: 'The same events as Server-Sent Events',
        security: bearer,
      },
    },
    channels: {
      socket: {
        address: '/v1/stream',
        title: 'WebSocket',
        description: [
          'Authenticate with the subprotocol `bearer.<token>` (alongside `flowplan.v1.json`),',
          'or send `{"token": "<token>"}` as the first message within 10 s. One event per JSON text frame.',
        ].join(' '),
        servers: [{ $ref: '#/servers/api' }],
        parameters: {},
        bindings: socketBinding('flowplan.v1.json'),
        messages,
      },
      socketMsgpack: {
        address: '/v1/stream',
        title: 'WebSocket, MessagePack',
        description:
          'The same WebSocket with the subprotocol `flowplan.v1.msgpack`: one event per binary frame, the Event encoded as MessagePack ' +
          '(maps with string keys, as the JSON frames). Authenticate as on the JSON socket.',
        servers: [{ $ref: '#/servers/api' }],
        parameters: {},
        bindings: socketBinding('flowplan.v1.msgpack'),
        messages: packed,
      },
      sse: {
        address: '/v1/events/stream',
        title: 'Server-Sent Events',
        description:
          "Authorization: Bearer <token>. Each event's SSE `id` is its cursor, its SSE `event` its type, its `data` the Event JSON; " +
          'a comment every 15 s keeps the line open. Query: `after`, `types`, `flowId` (as the WebSocket). Reconnect with the header ' +
          '`Last-Event-ID` (EventSource sends it), which takes precedence over `after`. When the server ends the stream it first sends ' +
          "the event `close` (not after a slow consumer's close, which ends the stream at once).",
        servers: [{ $ref: '#/servers/sse' }],
        'x-headers': {
          type: 'object',
          properties: {
            Authorization: { type: 'string', description: 'Bearer <token>' },
            'Last-Event-ID': lastEventId,
          },
        },
        messages: { ...messages, ...close },
      },
    },
    operations: {
      receiveOverSocket: {
        action: 'receive',
        channel: { $ref: '#/channels/socket' },
        security: [...subprotocol, ...bearer],
        messages: refsOf('socket', messages),
      },
      receiveOverSocketMsgpack: {
        action: 'receive',
        channel: { $ref: '#/channels/socketMsgpack' },
        security: [...subprotocol, ...bearer],
        messages: refsOf('socketMsgpack', packed),
      },
      receiveOverSse: {
        action: 'receive',
        channel: { $ref: '#/channels/sse' },
        security: bearer,
        messages: refsOf('sse', { ...messages, ...close }),
        bindings: { http: { method: 'GET', query } },
      },
    },
    components: {
      messages: { ...messages, ...packed, ...close },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A credential with flows:read (an API key `fpk_…` or a person token `fpa_…`) as `Authorization: Bearer <token>`. ' +
            'The WebSocket takes it as a subprotocol or first message instead (browsers cannot set the header).',
        },
        bearerSubprotocol: {
          type: 'httpApiKey',
          in: 'header',
          name: 'Sec-WebSocket-Protocol',
          description:
            'The same bearer as the subprotocol `bearer.<token>`, beside the format subprotocol; or `{"token": "<token>"} as the first message within 10 s.',
        },
      },
    },
  };
}
