/**
 * kill -9 the server while 1,000 subscribers stream from it and 20 writers write through it:
 * every subscriber resumes from its last cursor on the surviving process and ends with every
 * acknowledged event exactly once, each flow's in commit order (issue 20, item 7).
 */
import t from 'tap';
import WebSocket from 'ws';
import { startChildServer } from '../jobs/child.ts';
import { request, startTestServer, until } from '../../helpers/server.ts';
import type { EventPage, Flow, Task } from '../../helpers/wire.ts';

const SUBSCRIBERS = 1000;
const WRITERS = 20;
const WRITES_EACH = 15;
// One key holds every subscriber here.
const LIMITS = {
  RATE_LIMIT_PER_MINUTE: '100000000',
  RATE_LIMIT_BURST: '100000000',
  STREAMS_PER_CREDENTIAL: '100000',
};

interface Event {
  id: string;
  cursor: string;
  type: string;
  data: { flowId: string; taskId: string };
}

/** A subscriber that follows `types=task.created` and, whenever its socket closes, resumes on `next()` from its last cursor. */
class Subscriber {
  readonly events: Event[] = [];
  cursor: string;
  socket: WebSocket | null = null;
  reconnects = 0;
  done = false;

  constructor(
    from: string,
    private readonly token: string,
    private readonly base: () => string,
  ) {
    this.cursor = from;
  }

  connect(): Promise<void> {
    const ws = new WebSocket(
      `${this.base().replace('http', 'ws')}/v1/stream?types=task.created&after=${this.cursor}`,
      ['flowplan.v1.json', `bearer.${this.token}`],
    );
    this.socket = ws;
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Event;
      this.events.push(event);
      this.cursor = event.cursor;
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      if (this.done) return;
      this.reconnects++;
      // Resume from the last cursor read, on whichever process is up now.
      setTimeout(() => void this.connect(), 50 + Math.random() * 200);
    });
    return new Promise((resolve) => {
      ws.once('open', () => resolve());
      ws.once('close', () => resolve());
    });
  }

  close(): void {
    this.done = true;
    this.socket?.terminate();
  }
}

t.test(
  'kill -9 mid-stream: every subscriber resumes and ends with every acknowledged event exactly once, in order',
  async (t) => {
    const s = await startTestServer(t, {
      rateLimitPerMinute: 100_000_000,
      rateLimitBurst: 100_000_000,
      streamsPerCredential: 100_000,
    });
    const child = await startChildServer(t, s.databaseUrl, LIMITS);
    let base = child.url;
    const flows: string[] = [];
    for (let i = 0; i < WRITERS; i++)
      flows.push(
        (await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: `Flow ${i}` } }))
          .body.id,
      );
    const { next: from } = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey }))
      .body;

    const subscribers = Array.from(
      { length: SUBSCRIBERS },
      () => new Subscriber(from, s.adminKey, () => base),
    );
    t.teardown(() => {
      for (const sub of subscribers) sub.close();
    });
    for (let i = 0; i < SUBSCRIBERS; i += 100)
      await Promise.all(subscribers.slice(i, i + 100).map((sub) => sub.connect()));
    // On a loaded machine a socket of the burst can close before it opens; its subscriber
    // reconnects by itself, so wait for every one to be streaming (a refusal would never end).
    const streaming = () =>
      subscribers.filter((sub) => sub.socket?.readyState === WebSocket.OPEN).length;
    t.equal(
      await until(
        async () => streaming(),
        (open) => open === SUBSCRIBERS,
      ),
      SUBSCRIBERS,
      `${SUBSCRIBERS} subscribers streaming from the process about to die`,
    );
    const early = subscribers.map((sub) => sub.reconnects);
    const earlyTotal = early.reduce((total, n) => total + n, 0);
    if (earlyTotal > 0)
      t.comment(`${earlyTotal} sockets of the first burst closed before opening and reconnected`);

    // Writers: each adds tasks to its flow, one at a time, through the child until it dies, then through the survivor.
    const acknowledged = new Map<string, string[]>(flows.map((f) => [f, []]));
    let written = 0;
    let killed = false;
    const kill = async () => {
      killed = true;
      await child.kill();
      base = s.url;
    };
    await Promise.all(
      flows.map(async (flowId, w) => {
        for (let k = 0; k < WRITES_EACH; k++) {
          for (;;) {
            const target = base;
            const res = await request<Task>(target, 'POST', `/v1/flows/${flowId}/tasks`, {
              token: s.adminKey,
              body: { name: `w${w}-${k}` },
            }).catch(() => null);
            if (res?.status === 201) {
              acknowledged.get(flowId)!.push(res.body.id);
              break;
            }
            // The process died under the request: whether it committed is unknown, so the write is not acknowledged; write again.
            await until(
              async () => base !== target || killed,
              (moved) => moved,
              30_000,
            );
          }
          if (++written === (WRITERS * WRITES_EACH) / 3 && !killed) await kill();
        }
      }),
    );
    t.ok(killed, 'the server was killed mid-stream');

    // Ground truth: what committed, in commit (position) order per flow.
    const committed = new Map<string, string[]>(flows.map((f) => [f, []]));
    await until(
      async () =>
        (
          await s.sql<{ n: number }[]>`select count(*)::int as n from outbox where position is null`
        )[0]!.n,
      (n) => n === 0,
      60_000,
    );
    for (const row of await s.sql<
      { flowId: string; taskId: string }[]
    >`select flow_id, data->>'taskId' as task_id from outbox where type = 'task.created' order by position`) {
      committed.get(row.flowId)?.push(row.taskId);
    }
    const total = [...committed.values()].reduce((n, list) => n + list.length, 0);
    await until(
      async () => subscribers.filter((sub) => sub.events.length < total).length,
      (behind) => behind === 0,
      120_000,
    );

    let duplicates = 0;
    let outOfOrder = 0;
    let missingAcknowledged = 0;
    for (const sub of subscribers) {
      const ids = sub.events.map((e) => e.id);
      duplicates += ids.length - new Set(ids).size;
      for (const flowId of flows) {
        const got = sub.events.filter((e) => e.data.flowId === flowId).map((e) => e.data.taskId);
        if (JSON.stringify(got) !== JSON.stringify(committed.get(flowId))) outOfOrder++;
        missingAcknowledged += acknowledged.get(flowId)!.filter((id) => !got.includes(id)).length;
      }
    }
    t.equal(duplicates, 0, 'no event twice, for any subscriber');
    t.equal(missingAcknowledged, 0, 'every acknowledged event reached every subscriber');
    t.equal(outOfOrder, 0, "each flow's events in commit order, for every subscriber");
    t.ok(
      subscribers.every((sub, i) => sub.reconnects > early[i]!),
      'every subscriber was cut off and resumed',
    );
    t.comment(
      `${total} events committed (${[...acknowledged.values()].reduce((n, l) => n + l.length, 0)} acknowledged) reached ${SUBSCRIBERS} subscribers`,
    );
  },
);
