/**
 * How sure the finish is: the flow's open objectives as the forecast engine takes them (built
 * once per version), its samples run on the event loop when few, else split into parts of
 * bounded work on the worker pool, and the answer read off the samples.
 */
import { randomInt } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import {
  CRITICAL_TASKS_LISTED,
  FORECAST_WORK_PER_TOKEN,
  MAX_FORECAST_WORK,
  type ForecastQuery,
  type ForecastSchema,
} from '../../contract/forecast.schema.ts';
import { workingDayNames } from '../../engine/calendar.ts';
import { forecastPart, type ForecastModel, type ForecastPart } from '../../engine/forecast.ts';
import { validationFailed } from '../../platform/errors.ts';
import type { RecomputePool } from './recompute-pool.ts';
import { PROGRESS, type TaskRecord } from './model.ts';
import { refuseLateFinish, scheduleStart } from './schedule.ts';
import type { Snapshot } from './snapshot.ts';

export type ForecastView = Static<typeof ForecastSchema>;

/**
 * Up to this many `samples × open tasks` a forecast runs on the event loop: about 12 ms here,
 * 2 ms less than handing it to a worker and back. From twice that the pool takes no longer
 * and the event loop stays free (bench:forecast's crossover).
 */
export const IN_THREAD_WORK = 250_000;

/**
 * The most `samples × open tasks` one part on the pool draws: about 160 ms of a worker here
 * (bench:forecast's crossover). The pool serves workspaces in turn, a part at a time, so another
 * workspace's forecast waits for at most one part per worker, not for a whole large forecast.
 */
export const PART_WORK = 4_000_000;

interface Built {
  model: ForecastModel;
  /** Each engine task's position in the flow. */
  positions: Uint32Array;
}

const built = new WeakMap<Snapshot, Built>();

/** The open objectives in topological order, with their durations and the pieces drawn for them. */
export function forecastModel(snapshot: Snapshot): Built {
  let done = built.get(snapshot);
  if (done) return done;
  const { progress, duration } = snapshot.input;
  const g = snapshot.graph();
  const order = snapshot.topologicalOrder();
  const n = snapshot.size;
  const number = new Int32Array(n).fill(-1);
  const positionsOf: number[] = [];
  for (const v of order) {
    if (progress[v] === PROGRESS.done) continue;
    number[v] = positionsOf.length;
    positionsOf.push(v);
  }
  const m = positionsOf.length;
  // Each open task's open predecessors, by their numbers here.
  const rows = (start: Uint32Array, targets: Uint32Array) => {
    const rowStart = new Uint32Array(m + 1);
    const kept: number[] = [];
    positionsOf.forEach((v, k) => {
      for (let e = start[v] ?? 0, end = start[v + 1] ?? 0; e < end; e++) {
        const w = number[targets[e] ?? 0] ?? -1;
        if (w >= 0) kept.push(w);
      }
      rowStart[k + 1] = kept.length;
    });
    return { rowStart, row: Uint32Array.from(kept) };
  };
  const preds = rows(g.predStart, g.pred);
  const days = new Uint32Array(m);
  const ranged: number[] = [];
  const fixedHours: number[] = [];
  const pieceStart = [0];
  const low: number[] = [];
  const mode: number[] = [];
  const high: number[] = [];
  const { tasks } = snapshot.state;
  const { children } = snapshot;
  const pieceOf = (task: TaskRecord) => {
    // A range is only ever stored around an estimate (checkedRange).
    const hours = task.estimateHours ?? 0;
    if (task.estimateRange === null) return hours;
    low.push(task.estimateRange.low);
    mode.push(hours);
    high.push(task.estimateRange.high);
    return 0;
  };
  const counted = (s: TaskRecord) => s.progress !== PROGRESS.done && s.estimateHours !== null;
  // A loop with no list or closure made per task: a 100k-task flow's model is built on the event loop.
  for (let k = 0; k < m; k++) {
    const v = positionsOf[k] ?? 0;
    days[k] = Math.max(1, duration[v] ?? 1);
    const task = tasks[v];
    if (!task) continue;
    // Hours as objectiveHours counts them: the open sub-tasks' when any is estimated, else its own.
    const subtasks = children.size > 0 ? children.get(task.id) : undefined;
    const pieces = low.length;
    let fixed = 0;
    if (subtasks?.some(counted)) {
      for (const subtask of subtasks) if (counted(subtask)) fixed += pieceOf(subtask);
    } else fixed = pieceOf(task);
    if (low.length === pieces) continue;
    ranged.push(k);
    fixedHours.push(fixed);
    pieceStart.push(low.length);
  }
  done = {
    model: {
      m,
      predStart: preds.rowStart,
      pred: preds.row,
      days,
      ranged: Uint32Array.from(ranged),
      fixedHours: Float64Array.from(fixedHours),
      pieceStart: Uint32Array.from(pieceStart),
      low: Float64Array.from(low),
      mode: Float64Array.from(mode),
      high: Float64Array.from(high),
    },
    positions: Uint32Array.from(positionsOf),
  };
  built.set(snapshot, done);
  return done;
}

/**
 * What a forecast costs of the rate budget: one request, and one more for each
 * FORECAST_WORK_PER_TOKEN task schedules it draws (samples × open tasks): about 40 ms of a
 * worker's time each, here.
 */
export function forecastCost(snapshot: Snapshot, samples = 2000): number {
  const work = samples * forecastModel(snapshot).model.m;
  // One past the bound is refused before any sample is drawn: a request's price.
  return work > MAX_FORECAST_WORK ? 1 : 1 + Math.floor(work / FORECAST_WORK_PER_TOKEN);
}

/**
 * The samples of a forecast: in this thread when few, else on the pool in parts of at most
 * PART_WORK (one per worker at least), in `workspaceId`'s turn.
 */
async function sampled(
  pool: RecomputePool,
  model: ForecastModel,
  seed: number,
  samples: number,
  workspaceId: string,
): Promise<ForecastPart[]> {
  // A flow without ranges draws nothing: every sample is the same schedule.
  if (model.ranged.length === 0) {
    const one = forecastPart(model, { seed, first: 0, count: 1 });
    return [
      {
        finishes: new Int32Array(samples).fill(one.finishes[0] ?? -1),
        critical: one.critical.map((c) => c * samples),
      },
    ];
  }
  if (samples * model.m <= IN_THREAD_WORK)
    return [forecastPart(model, { seed, first: 0, count: samples })];
  // Each sample draws from its own generator (seed and index): any split gives the same samples.
  const parts = Math.min(
    samples,
    Math.max(pool.threads, Math.ceil((samples * model.m) / PART_WORK)),
  );
  const runs = Array.from({ length: parts }, (_, i) => {
    const first = Math.floor((i * samples) / parts);
    const next = Math.floor(((i + 1) * samples) / parts);
    return { seed, first, count: next - first };
  });
  return pool.forecast(model, runs, workspaceId);
}

/**
 * The CRITICAL_TASKS_LISTED tasks most often critical (never-critical ones left out), most
 * often first, then in flow order: one pass keeping the best few in order, not a sort of every
 * task (a 100k-task flow's would hold the event loop for tens of milliseconds).
 */
function mostCritical(critical: Uint32Array, positions: Uint32Array): number[] {
  const best: number[] = [];
  const before = (a: number, b: number) =>
    (critical[a] ?? 0) - (critical[b] ?? 0) || (positions[b] ?? 0) - (positions[a] ?? 0);
  for (let k = 0; k < critical.length; k++) {
    if (critical[k] === 0) continue;
    if (best.length === CRITICAL_TASKS_LISTED && before(k, best[best.length - 1] ?? 0) <= 0)
      continue;
    let at = best.length;
    while (at > 0 && before(k, best[at - 1] ?? 0) > 0) at--;
    best.splice(at, 0, k);
    if (best.length > CRITICAL_TASKS_LISTED) best.pop();
  }
  return best;
}

/** The forecast of the snapshot's finish from `query`'s start, seed and samples. */
export async function forecastOf(
  pool: RecomputePool,
  snapshot: Snapshot,
  query: Static<typeof ForecastQuery>,
): Promise<ForecastView> {
  const { samples = 2000 } = query;
  const { model } = forecastModel(snapshot);
  if (samples * model.m > MAX_FORECAST_WORK)
    throw validationFailed(
      [
        {
          in: 'query',
          pointer: '/samples',
          message: `${samples} samples of ${model.m} open tasks is more than the ${MAX_FORECAST_WORK.toLocaleString('en')} task schedules one forecast may draw: ask for at most ${Math.floor(MAX_FORECAST_WORK / model.m)} samples`,
        },
      ],
      undefined,
      { bound: MAX_FORECAST_WORK },
    );
  const start = scheduleStart(query.startDate);
  const seed = query.seed ?? randomInt(0, 2 ** 32);
  const { view, p95 } = await forecastFrom(pool, snapshot, start, samples, seed);
  // Refused where the caller chose the start, as the schedule is.
  if (query.startDate !== undefined) refuseLateFinish(start, p95, 'query');
  return view;
}

/** The samples the p80 date beside a published flow's or a PDF's projected finish is read from. */
const SHOWN_SAMPLES = 2000;
const shownP80 = new WeakMap<Snapshot, Map<string, Promise<string | null>>>();

/**
 * The day four in five samples finish by, from `start` (seed 0, so a page shows one date for a
 * version); null when no open task has a range (the date is then the projected finish itself).
 */
export function finishP80(
  pool: RecomputePool,
  snapshot: Snapshot,
  start: string,
): Promise<string | null> {
  const { model } = forecastModel(snapshot);
  if (model.ranged.length === 0 || SHOWN_SAMPLES * model.m > MAX_FORECAST_WORK)
    return Promise.resolve(null);
  let byStart = shownP80.get(snapshot);
  if (!byStart) shownP80.set(snapshot, (byStart = new Map()));
  let p80 = byStart.get(start);
  if (!p80) {
    p80 = forecastFrom(pool, snapshot, start, SHOWN_SAMPLES, 0).then(
      ({ view }) => view.finish.p80,
      (error: unknown) => {
        // A pool that could not take it now (a 503) may next time: not kept.
        byStart.delete(start);
        throw error;
      },
    );
    byStart.set(start, p80);
  }
  return p80;
}

async function forecastFrom(
  pool: RecomputePool,
  snapshot: Snapshot,
  start: string,
  samples: number,
  seed: number,
): Promise<{ view: ForecastView; p95: number }> {
  const { model, positions } = forecastModel(snapshot);
  const parts = await sampled(pool, model, seed, samples, snapshot.flow.workspaceId);
  // Sorted, not counted by day: a hostile flow's finish may be a billion working days out.
  const finishes = new Int32Array(samples);
  const critical = new Uint32Array(model.m);
  let at = 0;
  for (const part of parts) {
    finishes.set(part.finishes, at);
    at += part.finishes.length;
    part.critical.forEach((times, k) => (critical[k] = (critical[k] ?? 0) + times));
  }
  finishes.sort();
  const quantile = (p: number): number => finishes[Math.ceil(p * samples) - 1] ?? -1;
  const [p50, p80, p95] = [quantile(0.5), quantile(0.8), quantile(0.95)];
  const day = workingDayNames(start);
  const date = (offset: number) => (offset < 0 ? null : day(offset));
  const dueDate = snapshot.flow.dueDate?.slice(0, 10) ?? null;
  let onTime = 0;
  if (dueDate !== null)
    while (onTime < samples && (date(finishes[onTime] ?? -1) ?? dueDate) <= dueDate) onTime++;
  const ranked = mostCritical(critical, positions).map((k) => ({
    times: critical[k] ?? 0,
    task: snapshot.state.tasks[positions[k] ?? 0],
  }));
  const view = {
    samples,
    seed,
    startDate: start,
    finish: { p50: date(p50), p80: date(p80), p95: date(p95) },
    onTimeProbability: dueDate === null ? null : onTime / samples,
    tasks: ranked.map(({ times, task }) => ({
      taskId: task?.id ?? '',
      criticality: times / samples,
    })),
  };
  return { view, p95 };
}
