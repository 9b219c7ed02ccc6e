/**
 * The AsyncAPI 3.0 document of the event streams (served at /v1/asyncapi.json): the
 * WebSocket at /v1/stream and the Server-Sent Events at /v1/events/stream, each sending the
 * Event of the feed (event.schema.ts) for every webhook event type.
 */
import { WEBHOOK_EVENT_TYPES } from '../../services/webhooks/events.ts';
import type { CloseReason } from '../../services/events/hub.ts';
import { EventSchema } from './event.schema.ts';
import { WEBHOOK_EVENTS } from './webhook-events.schema.ts';

/** How the server ends a stream, by reason: the WebSocket close code, and the SSE `close` event's data. */
export const STREAM_CLOSE: Record<CloseReason, { code: number; reason: string }> = {
  slow: { code: 4000, reason: 'slow consumer: resume from your cursor' },
  revoked: { code: 4401, reason: 'credential revoked or expired' },
  stopping: { code: 1012, reason: 'server restarting: resume from your cursor' },
  unavailable: { code: 1013, reason: 'credential could not be checked: try again shortly from your cursor' },
};

const plain = (schema: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

export function buildAsyncApi(baseUrl: string): Record<string, unknown> {
  const url = new URL(baseUrl);
  const messages: Record<string, unknown> = {};
  for (const [type, summary, data] of WEBHOOK_EVENTS) {
    const event = plain(EventSchema);
    const properties = event.properties as Record<string, unknown>;
    properties.type = { type: 'string', const: type };
    properties.data = data;
    messages[type.replace('.', '_')] = { name: type, title: type, summary, contentType: 'application/json', payload: event };
  }
  const refs = Object.keys(messages).map((key) => ({ $ref: `#/components/messages/${key}` }));
  const filters = {
    after: { description: 'Resume after this cursor (an event\'s `cursor`); Last-Event-ID takes precedence. Without either: from now.' },
    types: { description: `Comma list of event types (default all): ${WEBHOOK_EVENT_TYPES.join(', ')}` },
    flowId: { description: 'Only this flow\'s events' },
  };
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'flowplan event streams',
      version: '1',
      description: [
        'Every change to a flow, in the order it committed, as it happens. A stream sends the events after its cursor the credential may read',
        '(flows:read: its workspace; a person also the flows shared with them), first those already in the log, then live.',
        'Each event carries its `cursor`: keep the last one and resume after it on reconnect; nothing is skipped or repeated.',
        'The same events are in `GET /v1/events` (the feed) and in webhook bodies.',
        '',
        'Closes: ' + Object.values(STREAM_CLOSE).map((c) => `${c.code} (${c.reason})`).join('; ') +
          '; 4400 (bad first message or query), 4410 (CURSOR_EXPIRED: the cursor is past retention, start again from `GET /v1/events`).',
        'A client whose unsent bytes pass the server\'s limit (STREAM_MAX_BUFFERED_BYTES) is closed with 4000 rather than buffered without end.',
      ].join('\n'),
    },
    servers: {
      api: { host: url.host, protocol: url.protocol === 'https:' ? 'wss' : 'ws', description: 'The flowplan API' },
      sse: { host: url.host, protocol: url.protocol === 'https:' ? 'https' : 'http', description: 'The same events as Server-Sent Events' },
    },
    channels: {
      socket: {
        address: '/v1/stream',
        title: 'WebSocket',
        description: [
          'Authenticate with the subprotocol `bearer.<token>` (alongside `flowplan.v1.json` or `flowplan.v1.msgpack`),',
          'or send `{"token": "<token>"}` as the first message within 10 s. One event per frame: JSON text frames,',
          'or MessagePack binary frames with the subprotocol `flowplan.v1.msgpack`.',
        ].join(' '),
        servers: [{ $ref: '#/servers/api' }],
        parameters: {},
        bindings: {
          ws: {
            method: 'GET',
            query: { type: 'object', properties: Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, { type: 'string', ...v }])) },
            headers: { type: 'object', properties: { 'Sec-WebSocket-Protocol': { type: 'string', description: 'flowplan.v1.json | flowplan.v1.msgpack, and bearer.<token>' } } },
          },
        },
        messages,
      },
      sse: {
        address: '/v1/events/stream',
        title: 'Server-Sent Events',
        description: 'Authorization: Bearer <token>. Each event\'s SSE `id` is its cursor, its SSE `event` its type, its `data` the Event JSON; ' +
          'a comment every 15 s keeps the line open; reconnect with Last-Event-ID.',
        servers: [{ $ref: '#/servers/sse' }],
        messages,
      },
    },
    operations: {
      receiveOverSocket: { action: 'receive', channel: { $ref: '#/channels/socket' }, messages: refs.map((r) => ({ $ref: r.$ref.replace('#/components/messages/', '#/channels/socket/messages/') })) },
      receiveOverSse: { action: 'receive', channel: { $ref: '#/channels/sse' }, messages: refs.map((r) => ({ $ref: r.$ref.replace('#/components/messages/', '#/channels/sse/messages/') })) },
    },
    components: { messages },
  };
}
