/**
 * Work views under writes (CONTRACT §1 ETag/304, §3 work views): a page's tag follows what
 * the page shows, so a conditional poll stays 304 while flows it does not show change, and
 * turns 200 the moment any byte of it would differ; a write re-ranks its own flow, never
 * the whole workspace, here or in another process.
 */
import t from 'tap';
import type { Test } from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { request, until, type ApiResponse, type TestServer, item } from '../../helpers/server.ts';
import { idsByName, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import type { WorkList } from '../../helpers/wire.ts';

// The work pages polled here are lists (never the overview).
function poll(s: TestServer, path: string, etag?: string): Promise<ApiResponse<WorkList>> {
  return s.api('GET', `/v1/work/${path}`, {
    token: s.adminKey,
    headers: etag ? { 'if-none-match': etag } : {},
  });
}

const names = (res: ApiResponse<WorkList>) => res.body.items.map((i) => i.taskName);

/** The work-index counters on /metrics. */
async function counters(s: TestServer): Promise<{ rebuilds: number; flowRanks: number }> {
  const text = await s.metrics();
  const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    rebuilds: read('flowplan_work_index_rebuilds_total'),
    flowRanks: read('flowplan_work_index_flow_ranks_total'),
  };
}

/** Polls `path` conditionally until it answers 200 (another process's write arrives by NOTIFY). */
async function until200(
  t: Test,
  s: TestServer,
  path: string,
  etag: string,
): Promise<ApiResponse<WorkList>> {
  const res = await until(
    () => poll(s, path, etag),
    (r) => r.status === 200,
  );
  t.equal(res.status, 200, `${path} changed`);
  return res;
}

t.test(
  "a page's tag follows its items and total: 304 while other flows change, 200 when it would differ",
  async (t) => {
    const s = await startFlowServer(t);
    // A (due first) fills the first page: a1, a2 and a1 → a3 all last six days, so all are critical.
    const a = await newFlow(t, s, {
      name: 'A',
      dueDate: '2098-01-01',
      tasks: [
        { name: 'a1', estimateHours: 40 },
        { name: 'a2', estimateHours: 48 },
        { name: 'a3', estimateHours: 8, after: [0] },
      ],
    });
    const b = await newFlow(t, s, {
      name: 'B',
      tasks: [
        { name: 'b1', estimateHours: 8 },
        { name: 'b2', estimateHours: 8, after: [0] },
      ],
    });
    const c = await newFlow(t, s, { name: 'C', tasks: [{ name: 'c1' }] });
    const idB = idsByName(b);

    const first = await poll(s, 'available?size=2');
    t.strictSame(names(first), ['a1', 'a2'], "the first page holds only A's items");
    const firstTag = first.headers.get('etag')!;
    const whole = await poll(s, 'available');
    t.strictSame(names(whole), ['a1', 'a2', 'b1', 'c1']);
    const blocked = await poll(s, 'blocked');
    t.strictSame(names(blocked), ['a3', 'b2']);
    const middle = await poll(s, 'available?size=1&from=1');
    t.strictSame(names(middle), ['a2']);

    await ok(t, s, 'PATCH', `/v1/flows/${b.id}/tasks/${idB.b1}`, { name: 'b1 renamed' });
    t.equal(
      (await poll(s, 'available?size=2', firstTag)).status,
      304,
      "a write to B leaves A's page alone",
    );
    t.equal(
      (await poll(s, 'available?size=1&from=1', middle.headers.get('etag')!)).status,
      304,
      "and a later page of A's items too",
    );
    const renamed = await poll(s, 'available', whole.headers.get('etag')!);
    t.equal(renamed.status, 200, "the page showing B's item changed");
    t.strictSame(names(renamed), ['a1', 'a2', 'b1 renamed', 'c1']);
    const blockedNow = await poll(s, 'blocked', blocked.headers.get('etag')!);
    t.equal(blockedNow.status, 200, "b2's blockedBy names b1: its page changed");
    t.strictSame(blockedNow.body.items[1]?.blockedBy, [
      { taskId: idB.b1, taskName: 'b1 renamed', blocking: 1 },
    ]);
    t.equal(
      (await poll(s, 'blocked', blockedNow.headers.get('etag')!)).status,
      304,
      'the new tag holds while nothing changes',
    );

    await ok(t, s, 'POST', `/v1/flows/${c.id}/tasks/${idsByName(c).c1}/start`);
    const fewer = await poll(s, 'available?size=2', firstTag);
    t.equal(
      fewer.status,
      200,
      "C's work started: the same items, but the total is part of the page",
    );
    t.strictSame([names(fewer), fewer.body.total], [['a1', 'a2'], 3]);
    const fewerTag = fewer.headers.get('etag')!;
    await ok(t, s, 'PATCH', `/v1/flows/${c.id}`, { name: 'C renamed' });
    t.equal(
      (await poll(s, 'available?size=2', fewerTag)).status,
      304,
      'renaming C moves no count: still 304',
    );

    // B due first: b1 jumps ahead of A's items, onto the first page and in front of a later one.
    await ok(t, s, 'PATCH', `/v1/flows/${b.id}`, { dueDate: '2097-01-01' });
    const jumped = await poll(s, 'available?size=2', fewerTag);
    t.equal(jumped.status, 200);
    t.strictSame(names(jumped), ['b1 renamed', 'a1']);
    const shifted = await poll(s, 'available?size=1&from=1', middle.headers.get('etag')!);
    t.equal(
      shifted.status,
      200,
      "a page whose own items' flow did not change still moves when an item ahead of it does",
    );
    t.strictSame(names(shifted), ['a1']);

    const aTag = (await poll(s, 'available?assigneeId=none&size=1')).headers.get('etag')!;
    await ok(t, s, 'POST', `/v1/flows/${a.id}/tasks/${idsByName(a).a2}/start`);
    t.equal(
      (await poll(s, 'available?assigneeId=none&size=1', aTag)).status,
      200,
      'the total of the filtered view moved',
    );
  },
);

t.test(
  'a write re-ranks its own flow, never the workspace, here or in another process',
  async (t) => {
    const s = await startFlowServer(t);
    const flows = [];
    for (let f = 0; f < 4; f++) {
      flows.push(
        await newFlow(t, s, {
          name: `F${f}`,
          dueDate: `209${f}-01-01`,
          tasks: [{ name: `f${f}a` }, { name: `f${f}b`, after: [0] }],
        }),
      );
    }
    const first = await poll(s, 'available?size=1');
    t.strictSame(names(first), ['f0a']);
    const start = await counters(s);
    t.strictSame(
      start,
      { rebuilds: 1, flowRanks: 4 },
      'the first poll builds the index whole: each flow ranked once',
    );

    await ok(
      t,
      s,
      'POST',
      `/v1/flows/${item(flows, 3).id}/tasks/${idsByName(item(flows, 3)).f3a}/start`,
    );
    t.equal(
      (await poll(s, 'available?size=1', first.headers.get('etag')!)).status,
      200,
      'the total moved',
    );
    t.strictSame(names(await poll(s, 'in-progress')), ['f3a'], 'and the write shows');
    t.strictSame(
      await counters(s),
      { rebuilds: 1, flowRanks: 5 },
      'one flow ranked again, no rebuild',
    );

    await newFlow(t, s, { name: 'New', dueDate: '2080-01-01', tasks: [{ name: 'n' }] });
    t.strictSame(names(await poll(s, 'available?size=1')), ['n'], 'a new flow takes its place');
    await ok(t, s, 'DELETE', `/v1/flows/${item(flows).id}`, undefined, 204);
    t.strictSame(names(await poll(s, 'available')), ['n', 'f1a', 'f2a'], 'an archived flow leaves');
    await ok(t, s, 'POST', `/v1/flows/${item(flows).id}/restore`);
    t.strictSame(
      names(await poll(s, 'available')),
      ['n', 'f0a', 'f1a', 'f2a'],
      'a restored one comes back in its place',
    );
    t.strictSame(
      await counters(s),
      { rebuilds: 1, flowRanks: 7 },
      'the new and the restored flow ranked; the archived one needs none',
    );

    // Another process writes: its notification marks that one flow here.
    const firstTwo = await poll(s, 'available?size=2');
    const all = await poll(s, 'available');
    const otherApp = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent' },
        {
          port: 0,
          databaseUrl: s.databaseUrl,
          rateLimitPerMinute: 1_000_000,
          rateLimitBurst: 1_000_000,
        },
      ),
    );
    t.teardown(() => otherApp.close());
    const res = await request(
      otherApp.url,
      'PATCH',
      `/v1/flows/${item(flows, 2).id}/tasks/${idsByName(item(flows, 2)).f2a}`,
      { token: s.adminKey, body: { name: 'f2a elsewhere' } },
    );
    t.equal(res.status, 200, 'renamed through the other process');
    const seen = await until200(t, s, 'available', all.headers.get('etag')!);
    t.strictSame(
      names(seen),
      ['n', 'f0a', 'f1a', 'f2a elsewhere'],
      "the other process's write shows here",
    );
    t.equal(
      (await poll(s, 'available?size=2', firstTwo.headers.get('etag')!)).status,
      304,
      'a first page without F2 stays 304',
    );
    t.strictSame(
      await counters(s),
      { rebuilds: 1, flowRanks: 8 },
      'one flow ranked again, no rebuild',
    );
  },
);
