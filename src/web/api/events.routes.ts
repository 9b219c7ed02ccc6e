/**
 * The event feed (`GET /v1/events`), its live streams (Server-Sent Events at
 * `/v1/events/stream`, a WebSocket at `/v1/stream`) and the streams' AsyncAPI document. The
 * log, cursors and fan-out are the events service's; here they meet HTTP.
 */
import secureJson from 'secure-json-parse';
import { DomainError } from '../../platform/errors.ts';
import type { Principal } from '../../services/auth/principal.ts';
import { parseTypes, readFeed } from '../../services/events/feed.ts';
import type { EventHub } from '../../services/events/hub.ts';
import type {
  CloseReason,
  EncodedEvent,
  StreamTarget,
  Subscription,
} from '../../services/events/subscription.ts';
import { failureResponse } from '../http/failures.ts';
import { parseQuery } from '../http/input.ts';
import { json, route, type Route } from '../http/route.ts';
import {
  requestIdOf,
  type RequestHead,
  type SocketConnection,
  type SocketSession,
  type SocketUpgrade,
} from '../http/request.ts';
import type { Edge } from '../http/edge.ts';
import { compile } from '../http/validator.ts';
import { buildAsyncApi, STREAM_CLOSE } from '../schemas/asyncapi.ts';
import { EventFeedQuery, EventPageSchema, EventStreamQuery } from '../../contract/event.schema.ts';
import type { Static } from '@sinclair/typebox';
import type { Services } from '../deps.ts';

export const STREAM_PATH = '/v1/stream';
export const MSGPACK_PROTOCOL = 'flowplan.v1.msgpack';
export const JSON_PROTOCOL = 'flowplan.v1.json';
/** A WebSocket without a bearer in its protocols must send one in its first message this soon. */
const FIRST_MESSAGE_MS = 10_000;

const read = { method: 'GET', auth: 'bearer', scopes: ['flows:read'], tags: ['Events'] } as const;

export function eventRoutes(services: Services): Route[] {
  const { sql, events: hub, config } = services;
  let asyncApi: Record<string, unknown> | null = null;
  return [
    route({
      ...read,
      path: '/v1/events',
      operationId: 'listEvents',
      summary: 'Events after a cursor, oldest first (list, then follow; `wait` long-polls)',
      query: EventFeedQuery,
      responses: {
        200: {
          description: 'A page of events and the cursor to read after next',
          schema: EventPageSchema,
        },
      },
      errors: ['CURSOR_EXPIRED'],
      handler: async (ctx) => {
        const recheck = () => services.auth.authenticate(ctx.headers['authorization']);
        return json(
          200,
          await readFeed(
            { sql, watch: hub, recheck, cursors: hub.cursors },
            ctx.principal,
            ctx.query,
          ),
        );
      },
    }),
    route({
      ...read,
      path: '/v1/events/stream',
      operationId: 'streamEvents',
      summary:
        'Events as Server-Sent Events, live (resume with Last-Event-ID; a comment every 15 s keeps the line open)',
      query: EventStreamQuery,
      responses: {
        200: {
          description:
            "text/event-stream: each event's `id` is its cursor and its `event` its type; `data` is the Event JSON",
          contentType: 'text/event-stream',
        },
      },
      errors: ['CURSOR_EXPIRED', 'RATE_LIMITED'],
      handler: async (ctx) => {
        const lastEventId = ctx.headers['last-event-id'];
        const sub = await hub.prepare(
          streamRequest(ctx.principal, ctx.headers['authorization']!, ctx.query, lastEventId),
        );
        return {
          status: 200,
          contentType: 'text/event-stream; charset=utf-8',
          headers: { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' },
          stream: (stream) => {
            // EventSource reconnects after this long, with the last id it saw.
            stream.write('retry: 1000\n\n');
            const target: StreamTarget = {
              transport: 'sse',
              send: (event) => stream.write(sseFrame(event)),
              buffered: () => stream.buffered(),
              heartbeat: () => stream.write(': heartbeat\n\n'),
              close: (reason) => {
                if (reason !== 'slow')
                  stream.write(`event: close\ndata: ${JSON.stringify(closeOf(reason))}\n\n`);
                stream.end();
              },
            };
            stream.onDrain(() => sub.drained());
            stream.onClose(() => hub.detach(sub));
            hub.attach(sub, target);
          },
        };
      },
    }),
    route({
      ...read,
      path: STREAM_PATH,
      operationId: 'openEventSocket',
      summary:
        'Events over a WebSocket (see /v1/asyncapi.json): JSON frames, or MessagePack with the subprotocol flowplan.v1.msgpack',
      query: EventStreamQuery,
      responses: {
        101: { description: 'Switching Protocols: the WebSocket of /v1/asyncapi.json' },
      },
      errors: ['UPGRADE_REQUIRED', 'RATE_LIMITED'],
      handler: () => {
        throw new DomainError(
          'UPGRADE_REQUIRED',
          `${STREAM_PATH} is a WebSocket: connect with Upgrade: websocket (see /v1/asyncapi.json)`,
        );
      },
    }),
    route({
      method: 'GET',
      path: '/v1/asyncapi.json',
      operationId: 'getAsyncApi',
      summary: 'The AsyncAPI 3.0 document of the event streams',
      tags: ['Events'],
      auth: 'none',
      responses: { 200: { description: 'AsyncAPI 3.0.0 document', schema: { type: 'object' } } },
      handler: () => json(200, (asyncApi ??= buildAsyncApi(config.baseUrl))),
    }),
  ];
}

type StreamQuery = Static<typeof EventStreamQuery>;

function streamRequest(
  principal: Principal,
  authorization: string,
  query: StreamQuery,
  lastEventId: string | undefined,
) {
  return {
    principal,
    authorization,
    filter: { types: parseTypes(query.types), flowId: query.flowId ?? null },
    after: lastEventId ?? query.after ?? null,
    afterFrom: lastEventId === undefined ? ('query' as const) : ('header' as const),
  };
}

/**
 * Each event's Server-Sent Events frame: its cursor as the id (a reconnect's Last-Event-ID), its
 * type as the event name. Made once per audience (the hub encodes an event once for each),
 * however many of that audience's streams send it.
 */
const sseFrames = new WeakMap<EncodedEvent, string>();

function sseFrame(encoded: EncodedEvent): string {
  let frame = sseFrames.get(encoded);
  if (frame === undefined) {
    const { cursor, type } = encoded.event;
    frame = `id: ${cursor}\nevent: ${type}\ndata: ${encoded.json()}\n\n`;
    sseFrames.set(encoded, frame);
  }
  return frame;
}

function closeOf(reason: CloseReason): { code: number; reason: string } {
  return STREAM_CLOSE[reason];
}

const validateQuery = compile<StreamQuery>(EventStreamQuery, 'query');

/**
 * The WebSocket's upgrade: the bearer comes as a subprotocol `bearer.<token>` (then the
 * credential, budget and query are judged before the upgrade, and refusals are plain HTTP
 * answers) or in the first message, `{"token": "<token>"}` (then refusals are close codes).
 */
export function eventSocket(
  edge: Edge,
  hub: EventHub,
  services: Pick<Services, 'log'>,
): SocketUpgrade {
  const match = edge.match('GET', STREAM_PATH);
  /** Judges a first message's bearer as the upgrade would have. */
  async function admitLate(
    token: string,
    remoteAddress: string,
  ): Promise<{ principal: Principal; authorization: string } | { code: number; reason: string }> {
    const authorization = `Bearer ${token}`;
    const head: RequestHead = {
      method: 'GET',
      path: STREAM_PATH,
      query: '',
      headers: { authorization },
      remoteAddress,
    };
    const verdict = await edge.admit(head, match);
    if ('refused' in verdict) {
      const { error } = verdict;
      // A close reason has room for 123 bytes: the envelope's code and the start of its message.
      return {
        code: verdict.refused.status === 429 ? 4429 : 4401,
        reason: `${error.code}: ${error.message}`.slice(0, 120),
      };
    }
    return { principal: verdict.admitted.principal!, authorization };
  }

  class EventSocketSession implements SocketSession {
    private connection: SocketConnection | null = null;
    private sub: Subscription | null = null;
    private timer: NodeJS.Timeout | null = null;
    private gone = false;

    constructor(
      private readonly hub: EventHub,
      private readonly binary: boolean,
      private readonly query: StreamQuery,
      private readonly lastEventId: string | undefined,
      /** The client's address: its failed first messages spend its own budget, no one else's. */
      private readonly remoteAddress: string,
    ) {}

    async prepare(principal: Principal, authorization: string): Promise<void> {
      this.sub = await this.hub.prepare(
        streamRequest(principal, authorization, this.query, this.lastEventId),
      );
    }

    open(connection: SocketConnection): void {
      this.connection = connection;
      if (this.sub) return this.start();
      this.timer = setTimeout(
        () => connection.close(4401, 'send {"token": "<bearer>"} first'),
        FIRST_MESSAGE_MS,
      );
    }

    message(data: Buffer): void {
      if (this.sub || this.timer === null) return; // after the first message, clients have nothing to say
      clearTimeout(this.timer);
      this.timer = null;
      // Parsed as a request body is (input.ts): not JSON, or a forbidden key, is no token.
      const token = (secureJson.safeParse(data) as { token?: unknown } | null | undefined)?.token;
      if (typeof token !== 'string' || token.length > 4096)
        return this.connection!.close(4400, 'the first message must be {"token": "<bearer>"}');
      void admitLate(token, this.remoteAddress).then(
        async (admitted) => {
          if (this.gone) return;
          if ('code' in admitted) return this.connection!.close(admitted.code, admitted.reason);
          try {
            await this.prepare(admitted.principal, admitted.authorization);
          } catch (error) {
            const code = error instanceof DomainError ? error.code : null;
            return this.connection!.close(
              code === 'CURSOR_EXPIRED' ? 4410 : code === 'RATE_LIMITED' ? 4429 : 4400,
              String((error as Error).message).slice(0, 120),
            );
          }
          if (!this.gone) this.start();
        },
        () => this.connection!.close(1011, 'internal error'),
      );
    }

    drain(): void {
      this.sub?.drained();
    }

    closed(): void {
      this.gone = true;
      if (this.timer) clearTimeout(this.timer);
      if (this.sub) this.hub.detach(this.sub);
    }

    private start(): void {
      const connection = this.connection!;
      const binary = this.binary;
      this.hub.attach(this.sub!, {
        transport: 'websocket',
        send: (event) => connection.send(binary ? event.msgpack() : event.json(), binary),
        buffered: () => connection.buffered(),
        heartbeat: () => {},
        close: (reason) => {
          const { code, reason: text } = closeOf(reason);
          connection.close(code, text);
        },
      });
    }
  }

  return async (head, protocols) => {
    const format = protocols.includes(MSGPACK_PROTOCOL)
      ? MSGPACK_PROTOCOL
      : protocols.includes(JSON_PROTOCOL)
        ? JSON_PROTOCOL
        : null;
    const bearer = protocols.find((p) => p.startsWith('bearer.'))?.slice('bearer.'.length);
    const requestId = requestIdOf(head.headers);
    const refusal = (error: unknown) => ({
      refused: failureResponse(
        services.log,
        error,
        { 'X-Request-Id': requestId },
        head,
        requestId,
        null,
      ),
    });
    let query: StreamQuery;
    try {
      query = validateQuery(parseQuery(head.query));
    } catch (error) {
      return refusal(error);
    }
    const session = new EventSocketSession(
      hub,
      format === MSGPACK_PROTOCOL,
      query,
      head.headers['last-event-id'],
      head.remoteAddress,
    );
    if (bearer === undefined) return { protocol: format, session, pending: true };
    const authorization = `Bearer ${bearer}`;
    const verdict = await edge.admit(
      { ...head, headers: { ...head.headers, authorization } },
      match,
    );
    if ('refused' in verdict) return verdict;
    try {
      await session.prepare(verdict.admitted.principal!, authorization);
    } catch (error) {
      return refusal(error);
    }
    return { protocol: format, session };
  };
}
