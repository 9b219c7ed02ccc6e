/**
 * An integrator's main loop: poll the workspace's ready work, start it, do it, complete it.
 * Polls are conditional (If-None-Match: an unchanged list answers 304 with no body and costs
 * no rate budget) and read as MessagePack (smaller and faster to decode than JSON).
 *
 *   FLOWPLAN_URL=http://127.0.0.1:8080 KEY=fpk_… node --import tsx examples/poll-work.ts [--until-done]
 *
 * KEY needs flows:read and work:write. It polls until stopped; with --until-done it stops once
 * nothing is left for it: nothing in hand and the list unchanged (304) since it last looked.
 */
import { unpack } from 'msgpackr';

interface WorkItem {
  taskId: string;
  taskName: string;
  flowId: string;
  flowName: string;
  subtasks: unknown[];
}

const base = process.env.FLOWPLAN_URL ?? 'http://127.0.0.1:8080';
const key = process.env.KEY;
if (!key) throw new Error('Set KEY to an API key (npm start prints one)');
const untilDone = process.argv.includes('--until-done');
const auth = { authorization: `Bearer ${key}` };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let etag: string | null = null;
const claimed: WorkItem[] = []; // started by this loop, not yet completed
const seen = { polls: 0, unchanged: 0, completed: 0 };

for (;;) {
  const res = await fetch(`${base}/v1/work/available?size=100`, {
    headers: { ...auth, accept: 'application/msgpack', ...(etag ? { 'if-none-match': etag } : {}) },
  });
  seen.polls++;
  if (res.status === 429) {
    await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    continue;
  }
  if (res.status === 304) {
    seen.unchanged++;
    console.log('304: no change since the last poll');
    if (claimed.length === 0 && untilDone) break;
  } else if (res.ok) {
    etag = res.headers.get('etag');
    const page = unpack(Buffer.from(await res.arrayBuffer())) as {
      total: number;
      items: WorkItem[];
    };
    // An objective with sub-tasks completes through them: left to the people doing those.
    for (const item of page.items.filter((i) => i.subtasks.length === 0)) {
      const started = await fetch(`${base}/v1/flows/${item.flowId}/tasks/${item.taskId}/start`, {
        method: 'POST',
        headers: auth,
      });
      if (started.status === 409) continue; // someone else started it first
      if (!started.ok)
        throw new Error(`start ${item.taskName}: ${started.status} ${await started.text()}`);
      console.log(`started ${item.taskName} (${item.flowName})`);
      claimed.push(item);
    }
  } else {
    throw new Error(`GET /v1/work/available: ${res.status} ${await res.text()}`);
  }

  const item = claimed.shift();
  if (!item) {
    await sleep(1000);
    continue;
  } // nothing in hand: look again in a while
  // ... the work itself happens here ...
  const done = await fetch(`${base}/v1/flows/${item.flowId}/tasks/${item.taskId}/complete`, {
    method: 'POST',
    headers: auth,
  });
  if (!done.ok) throw new Error(`complete ${item.taskName}: ${done.status} ${await done.text()}`);
  const { unblocked } = (await done.json()) as { unblocked: { name: string }[] };
  seen.completed++;
  console.log(
    `completed ${item.taskName}${unblocked.length ? `, unblocking ${unblocked.map((t) => t.name).join(', ')}` : ''}`,
  );
}
console.log(
  `done: ${seen.completed} completed, ${seen.polls} polls, ${seen.unchanged} answered 304`,
);
