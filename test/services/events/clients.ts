/**
 * Clients of the event streams for tests: an SSE reader and a WebSocket, as a client sees them,
 * a flow to make events with, a metric's value, and retention run until a cursor expires.
 */
import type { Test } from 'tap';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { EventLogRetention } from '../../../src/services/events/retention.ts';
import { until, type ApiResponse, type TestServer } from '../../helpers/server.ts';
import type { Refusal } from '../../helpers/wire.ts';

export interface Event {
  id: string;
  cursor: string;
  type: string;
  timestamp: string;
  workspaceId: string;
  data: Record<string, unknown>;
}

/** An SSE client: the frames as they arrive (id, event, data), and how the stream ended. */
export async function sse(
  t: Test,
  base: string,
  token: string,
  query = '',
  headers: Record<string, string> = {},
) {
  const controller = new AbortController();
  const res = await fetch(`${base}/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: controller.signal,
  });
  const frames: { id?: string; event?: string; data: string }[] = [];
  const comments: string[] = [];
  let ended = false;
  const reading = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const frame: { id?: string; event?: string; data: string } = { data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data += line.slice(6);
          }
          if (frame.data) frames.push(frame);
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  t.teardown(async () => {
    controller.abort();
    await reading;
  });
  const events = () =>
    frames.filter((f) => f.event !== 'close').map((f) => JSON.parse(f.data) as Event);
  return { res, frames, comments, events, ended: () => ended, close: () => controller.abort() };
}

/** A WebSocket client: decoded events, and its close code and reason once closed. */
export function socket(t: Test, base: string, protocols: string[], query = '') {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/stream${query}`, protocols);
  const events: Event[] = [];
  const state: {
    code: number | null;
    reason: string;
    status: number | null;
    protocol: string | null;
    /** Why the client gave up on the connection, when it did (a 1006 says only that it did). */
    error: string | null;
  } = { code: null, reason: '', status: null, protocol: null, error: null };
  ws.on('message', (data, binary) =>
    events.push((binary ? unpack(data as Buffer) : JSON.parse(String(data))) as Event),
  );
  ws.on('close', (code, reason) => {
    state.code = code;
    state.reason = String(reason);
  });
  ws.on('unexpected-response', (_req, res) => {
    state.status = res.statusCode ?? null;
    state.code = -1;
    res.resume();
  });
  ws.on('error', (error) => {
    state.error ??= error.message;
  });
  const opened = new Promise<boolean>((resolve) => {
    ws.once('open', () => {
      state.protocol = ws.protocol;
      resolve(true);
    });
    ws.once('close', () => resolve(false));
    ws.once('unexpected-response', () => resolve(false));
  });
  t.teardown(() => ws.terminate());
  return { ws, events, state, opened };
}

export const newFlow = async (s: TestServer, name: string, token = s.adminKey) => {
  const res = await s.api('POST', '/v1/flows', {
    token,
    body: { name, tasks: [{ name: 'One' }, { name: 'Two', after: [0] }] },
  });
  return res.body as { id: string; tasks: { id: string }[] };
};

/** A sample of the metrics text without labels, or with them written out (`name{label="v"}`); NaN when absent. */
export async function metric(s: TestServer, name: string): Promise<number> {
  const line = (await s.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

/**
 * Runs retention as on a day nine days on (every partition up to today's past a 7-day
 * retention) until `cursor` reads as expired, and answers that read with the partitions dropped
 * and made. Retention keeps a day while any of its events is not drained yet, and drops it at a
 * later run: on a slow machine an event written just before (a share's, a notification's) may
 * still be on its way, and one run left the cursor readable (Node 24 tier, 2026-11-28).
 */
export async function expireCursor(
  s: TestServer,
  retention: EventLogRetention,
  token: string,
  cursor: string,
): Promise<{ expired: ApiResponse<Refusal>; dropped: string[]; created: string[] }> {
  const dropped: string[] = [];
  const created: string[] = [];
  const expired = await until(
    async () => {
      const run = await retention.run(new Date(Date.now() + 9 * 86_400_000));
      dropped.push(...run.dropped);
      created.push(...run.created);
      return s.api<Refusal>('GET', `/v1/events?after=${cursor}`, { token });
    },
    (response) => response.status !== 200,
  );
  return { expired, dropped, created };
}
