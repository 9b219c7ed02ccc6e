/**
 * FreshLookups against a simple model: a "database" whose value moves on at random moments,
 * callers arriving at random moments. Every answer must have been read after its caller
 * arrived (so it shows every commit made before), at most one look-up per key runs at a time,
 * and concurrent callers share look-ups.
 */
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { FreshLookups } from '../../../src/web/public/fresh-lookups.ts';

t.test('an answer never predates its caller, and callers share look-ups', async (t) => {
  for (let round = 0; round < 20; round++) {
    let version = 0;
    let running = 0;
    let maxRunning = 0;
    let lookUps = 0;
    const lookups = new FreshLookups(async (key: string) => {
      lookUps++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      const seen = version; // read at the start: what a query sees is fixed when it begins
      await sleep(1 + Math.floor(Math.random() * 3));
      running--;
      if (Math.random() < 0.05) throw new Error(`failed read of ${key}`);
      return seen;
    });
    const stale: string[] = [];
    const callers: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      if (Math.random() < 0.1) version++;
      const arrivedAt = version;
      callers.push(
        lookups.get('k').then(
          (seen) => {
            if (seen < arrivedAt) stale.push(`caller ${i} arrived at ${arrivedAt}, got ${seen}`);
          },
          () => {},
        ),
      );
      if (Math.random() < 0.3) await sleep(Math.random() < 0.5 ? 0 : 1);
    }
    await Promise.all(callers);
    t.strictSame(stale, [], `round ${round}: no stale answer`);
    t.equal(maxRunning, 1, `round ${round}: one look-up of a key at a time`);
    t.ok(lookUps < 300, `round ${round}: ${lookUps} look-ups for 300 callers`);
  }
});

t.test('keys are independent, and a failed look-up is not reused', async (t) => {
  let calls = 0;
  const lookups = new FreshLookups(async (key: string) => {
    calls++;
    await sleep(1);
    if (calls === 1) throw new Error('down');
    return key.toUpperCase();
  });
  await t.rejects(lookups.get('a'), /down/);
  t.equal(await lookups.get('a'), 'A', 'the next caller gets a new look-up');
  t.strictSame(await Promise.all([lookups.get('b'), lookups.get('c')]), ['B', 'C']);
});
