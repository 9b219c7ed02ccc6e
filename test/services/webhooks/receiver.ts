/**
 * A real HTTP receiver on loopback for webhook tests: records every request (headers, raw
 * body, arrival time) and answers as the test says (status, headers, body, or never).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../../src/storage/db.ts';
import { until } from '../../helpers/server.ts';
import type { WebhookPayload } from '../../helpers/wire.ts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed, read as the delivery's payload (null when it is not JSON). */
  json: WebhookPayload;
  at: number;
  path: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Never answer (the sender's timeout must end it). */
  hang?: boolean;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer the next requests (default 204). */
  answer: (request: Received, index: number) => Answer;
  /** Resolves once `count` requests arrived (or rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<Received[]>;
}

export async function startReceiver(t: Test): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => ({ status: 204 }),
    waitFor: async (count, ms = 60_000) => {
      const deadline = Date.now() + ms;
      while (receiver.received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`only ${receiver.received.length} of ${count} webhook requests arrived`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return receiver.received;
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = null;
      }
      const entry: Received = {
        headers: request.headers,
        body,
        json: parsed as WebhookPayload,
        at: Date.now(),
        path: request.url ?? '',
      };
      receiver.received.push(entry);
      const answer = receiver.answer(entry, receiver.received.length - 1);
      if (answer.hang) return;
      response.writeHead(answer.status ?? 204, answer.headers);
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return receiver;
}

/** Verifies a request the way a receiver would, with the `standardwebhooks` package; returns the payload. */
export function verify(secret: string, received: Received): WebhookPayload {
  // The package hands back the parsed body as it came; what it is, is what this test reads.
  return new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as WebhookPayload;
}

/**
 * Resolves once nothing more will be sent: every committed event drained and read by the
 * webhook collector, and every lane with nothing left to send. What a receiver holds then is
 * all it will get.
 */
export async function deliveriesSettled(sql: Sql): Promise<void> {
  // By part, so a wait that runs out says which one is stuck.
  await until(
    async () =>
      (
        await sql<{ undrained: number; uncollected: number; unfinished: number }[]>`select
        (select count(*) from outbox where processed_at is null)::int as undrained,
        (select count(*) from outbox where position > (select position from webhook_collector))::int as uncollected,
        (select count(*) from webhook_lanes where state <> 'idle')::int as unfinished`
      )[0]!,
    (n) => n.undrained + n.uncollected + n.unfinished === 0,
  );
}
