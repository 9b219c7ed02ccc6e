/**
 * The pool's fair queue against what "served in turn" means, checked on random sequences of
 * jobs arriving, starting and ending: every job is handed out once, each tenant's in order, and
 * no tenant has two jobs started while another waits the whole time in between.
 */
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { FairQueue } from '../../src/platform/fair-queue.ts';

// Properties assert by throwing (node:assert) so fast-check can shrink a failure.

const TENANTS = ['a', 'b', 'c', 'd'];

/** A step: a job of a tenant arrives, the next job starts, or a running job (the k-th) ends. */
const stepArb = fc.oneof(
  fc.record({ push: fc.constantFrom(...TENANTS) }),
  fc.constant({ shift: true as const }),
  fc.record({ end: fc.nat(7) }),
);

t.test(
  'served in turn: once each, in order within a tenant, none twice while another waits',
  async (t) => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 200 }), (steps) => {
        const queue = new FairQueue<number>();
        let made = 0;
        /** Each tenant's jobs not handed out yet, in arrival order: what the queue must give back. */
        const waiting = new Map<string, number[]>();
        const running: string[] = [];
        const handedOut: number[] = [];
        /** Per tenant, the tenants that waited at its last start and have not started since. */
        const passedOver = new Map<string, Set<string>>();
        const waiters = () =>
          new Set([...waiting].filter(([, jobs]) => jobs.length > 0).map(([w]) => w));
        for (const step of steps) {
          if ('push' in step) {
            queue.push(step.push, made);
            waiting.set(step.push, [...(waiting.get(step.push) ?? []), made++]);
          } else if ('shift' in step) {
            const next = queue.shift();
            const any = waiters();
            if (any.size === 0) {
              assert.equal(next, undefined, 'nothing waits');
              continue;
            }
            assert.ok(next, 'a job waits');
            const jobs = waiting.get(next.tenant) ?? [];
            assert.equal(next.job, jobs.shift(), 'first in, first out within a tenant');
            handedOut.push(next.job);
            // Whoever waited at this tenant's last start, and still waits unserved, should have gone first.
            for (const other of passedOver.get(next.tenant) ?? [])
              assert.ok(!any.has(other), `${next.tenant} started twice while ${other} waited`);
            for (const set of passedOver.values()) set.delete(next.tenant);
            any.delete(next.tenant);
            passedOver.set(next.tenant, any);
            running.push(next.tenant);
          } else if (running.length > 0) {
            const [tenant] = running.splice(step.end % running.length, 1);
            queue.done(tenant ?? '');
            // A tenant with nothing pending starts afresh: its next job is a first.
            if (!running.includes(tenant ?? '') && (waiting.get(tenant ?? '')?.length ?? 0) === 0)
              passedOver.delete(tenant ?? '');
          }
          assert.equal(
            queue.size,
            [...waiting.values()].reduce((n, jobs) => n + jobs.length, 0),
          );
        }
        for (;;) {
          const next = queue.shift();
          if (!next) break;
          handedOut.push(next.job);
        }
        assert.deepEqual(
          [...handedOut].sort((x, y) => x - y),
          Array.from({ length: made }, (_, i) => i),
          'every job handed out once',
        );
      }),
      { numRuns: 300 },
    );
    t.pass('the queue serves tenants in turn');
  },
);

t.test(
  'a flood and a newcomer: the newcomer goes next; a tenant idle again starts afresh',
  async (t) => {
    const queue = new FairQueue<string>();
    for (const job of ['a1', 'a2', 'a3']) queue.push('a', job);
    t.equal(queue.shift()?.job, 'a1');
    queue.push('b', 'b1');
    t.equal(queue.shift()?.job, 'b1', 'b, never served, before a’s second');
    t.equal(queue.shift()?.job, 'a2');
    queue.done('b');
    // b has nothing pending now: its next job counts as its first, ahead of a (served last at a2).
    queue.push('b', 'b2');
    t.equal(queue.shift()?.job, 'b2');
    t.equal(queue.shift()?.job, 'a3');
    t.equal(queue.shift(), undefined);
    t.equal(queue.size, 0);
  },
);

t.test('drain takes every waiting job out; the running ones still end', async (t) => {
  const queue = new FairQueue<string>();
  queue.push('a', 'a1');
  queue.push('a', 'a2');
  queue.push('b', 'b1');
  t.equal(queue.shift()?.job, 'a1');
  t.strictSame(queue.drain().sort(), ['a2', 'b1']);
  t.equal(queue.size, 0);
  queue.done('a');
  queue.done('unknown');
  queue.push('b', 'b2');
  t.equal(queue.shift()?.job, 'b2');
});
