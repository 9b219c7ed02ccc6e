/**
 * Seeded random flows with typed links for the large cases (benchmark): random-dag.ts's DAG, its
 * links three in ten SS, FF or SF and as many with a lag or a lead, a few milestones, and
 * constraints on a few tasks whose day indexes a holiday calendar gives (2,000 holidays: every
 * date it turns into an index is a binary search over them).
 */
import { WorkCalendar } from '../../src/engine/calendar.ts';
import { NO_BOUND } from '../../src/engine/cpm.ts';
import { LINK } from '../../src/engine/graph.ts';
import type { RecomputeInput } from '../../src/engine/recompute.ts';
import { randomDag, rng } from './random-dag.ts';

/** Mondays to Fridays, and 2,000 holidays: one weekday in five from 2026 on. */
export function holidayCalendar(): WorkCalendar {
  const holidays: string[] = [];
  for (let day = Date.UTC(2026, 0, 1); holidays.length < 2000; day += 5 * 86_400_000)
    holidays.push(new Date(day).toISOString().slice(0, 10));
  return new WorkCalendar({ workingDays: [1, 2, 3, 4, 5], hoursPerDay: 8, holidays });
}

/** The typed flow of randomDag(n, { seed }), from `start` on `calendar`. */
export function typedRandomFlow(
  n: number,
  opts: { seed?: number; calendar?: WorkCalendar; start?: string } = {},
): RecomputeInput {
  const input = randomDag(n, { seed: opts.seed });
  const random = rng((opts.seed ?? 1) + 17);
  const m = input.from.length;
  const linkType = new Uint8Array(m);
  const lag = new Int32Array(m);
  const types = [LINK.SS, LINK.FF, LINK.SF];
  for (let e = 0; e < m; e++) {
    if (random() < 0.3) linkType[e] = types[Math.floor(random() * 3)] ?? LINK.FS;
    if (random() < 0.3) lag[e] = Math.floor(random() * 9) - 3;
  }
  const milestone = new Uint8Array(n);
  const startNoEarlier = new Int32Array(n);
  const finishNoLater = new Int32Array(n).fill(NO_BOUND);
  const days = (opts.calendar ?? holidayCalendar()).days(opts.start ?? '2026-01-05');
  const date = (offset: number) =>
    new Date(Date.UTC(2026, 0, 5) + offset * 86_400_000).toISOString().slice(0, 10);
  for (let v = 0; v < n; v++) {
    const r = random();
    if (r < 0.03) milestone[v] = 1;
    else if (r < 0.08) startNoEarlier[v] = days.onOrAfter(date(Math.floor(random() * 400)));
    else if (r < 0.13) finishNoLater[v] = 1 + days.onOrBefore(date(Math.floor(random() * 4000)));
  }
  return {
    ...input,
    linkType,
    lag,
    milestone,
    startNoEarlier,
    finishNoLater,
    inProgressAtZero: true,
  };
}
