/**
 * Monte Carlo forecast of a flow's finish: each sample draws the hours of every ranged task from
 * its triangular distribution (low, estimate, high), schedules the open tasks by cpm.ts's passes
 * (working days, max(1, ceil(hours / hours a day))) and notes the finish and which tasks were
 * critical (total float ≤ 0). Pure and over typed arrays. With FS links only, no lag, no
 * constraint, milestone or task in progress, a sample costs a forward pass over every task and a
 * walk back over the critical ones; otherwise a forward and a backward pass.
 *
 * Every sample has a generator of its own, seeded from the forecast's seed and the sample's
 * number: samples split across any number of workers give the same draws, so the same seed
 * gives the same answer on any pool size.
 */
import { HOURS_PER_DAY } from './calendar.ts';
import { finishNeed, lateOffset, NO_BOUND, startNeed } from './cpm.ts';

/**
 * The open tasks of a flow, numbered in topological order (a task's predecessors have lower
 * numbers), with only the edges between open tasks: done tasks take no time and hold nothing up.
 */
export interface ForecastModel {
  /** Open tasks. */
  m: number;
  predStart: Uint32Array;
  pred: Uint32Array;
  /** Working days of each task when nothing is drawn for it (0: a milestone). */
  days: Uint32Array;
  /** The tasks whose hours are drawn, ascending. */
  ranged: Uint32Array;
  /** Hours of each ranged task that are not drawn (sub-tasks estimated without a range). */
  fixedHours: Float64Array;
  /** The drawn pieces of ranged task k: pieceStart[k] … pieceStart[k + 1] − 1. */
  pieceStart: Uint32Array;
  low: Float64Array;
  mode: Float64Array;
  high: Float64Array;
  /** Beside pred: each link packed as graph.ts's rows hold it (packLink); absent: FS, no lag. */
  predLink?: Int32Array;
  /** Per task: 1 when in progress (S = 0, as cpm.ts's inProgressAtZero); absent: none is. */
  started?: Uint8Array;
  /** Per task: the least S and the greatest LF, as cpm.ts's TaskFacts; absent: none. */
  startNoEarlier?: Int32Array;
  finishNoLater?: Int32Array;
  /** The calendar's hours a working day, which drawn hours are divided by; absent: 8. */
  hoursPerDay?: number;
}

/** Samples `first` … `first + count − 1` of the forecast seeded `seed`. */
export interface ForecastRun {
  seed: number;
  first: number;
  count: number;
}

export interface ForecastPart {
  /** Each sample's finish: the last working day (offset from the start) of any open task. */
  finishes: Int32Array;
  /** For each task, the samples in which it was critical. */
  critical: Uint32Array;
}

/** A sample's generator state: its own stream, whatever else runs (an avalanche of seed and number). */
export function sampleState(seed: number, sample: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(sample + 1, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) | 0;
}

/** The hours at quantile u of the triangular distribution (low, mode, high). */
export function triangular(u: number, low: number, mode: number, high: number): number {
  const span = high - low;
  if (span <= 0) return mode;
  const left = mode - low;
  return u * span < left
    ? low + Math.sqrt(u * span * left)
    : high - Math.sqrt((1 - u) * span * (high - mode));
}

/** Samples scheduled together: each pass over a task's edges serves this many. */
function blockSize(m: number): number {
  // Four arrays of m × block numbers: kept to a few megabytes on the largest flows.
  return m <= 20_000 ? 16 : 8;
}

/**
 * The samples of `run`, a block of them at a time: each task's numbers for the block's samples
 * sit side by side (task v, sample k at v × K + k), so a pass reads each edge once per block,
 * not once per sample. Each sample still draws from its own generator, in task order.
 */
export function forecastPart(model: ForecastModel, run: ForecastRun): ForecastPart {
  const { m, predStart, pred, ranged, fixedHours, pieceStart } = model;
  const { low, mode, high } = model;
  const K = blockSize(m);
  const days = new Int32Array(m * K);
  for (let v = 0; v < m; v++) days.fill(model.days[v] ?? 1, v * K, v * K + K);
  const es = new Int32Array(m * K);
  const ef = new Int32Array(m * K);
  const states = new Int32Array(K);
  const finish = new Int32Array(K);
  // A task is marked when its number is this sample's stamp: no clearing between samples.
  const seen = new Uint32Array(m);
  let stamp = 0;
  const stack = new Uint32Array(m);
  const critical = new Uint32Array(m);
  const finishes = new Int32Array(run.count);
  const r = ranged.length;
  const perDay = model.hoursPerDay ?? HOURS_PER_DAY;
  const general = isGeneral(model);
  const late = general ? new Int32Array(m * K) : null;
  for (let first = 0; first < run.count; first += K) {
    const size = Math.min(K, run.count - first);
    for (let k = 0; k < size; k++) states[k] = sampleState(run.seed, run.first + first + k);
    for (let j = 0; j < r; j++) {
      const at = (ranged[j] ?? 0) * K;
      const from = pieceStart[j] ?? 0;
      const to = pieceStart[j + 1] ?? 0;
      for (let k = 0; k < size; k++) {
        // mulberry32, inline: a call per draw would cost more than the draw.
        let state = states[k] ?? 0;
        let hours = fixedHours[j] ?? 0;
        for (let p = from; p < to; p++) {
          state = (state + 0x6d2b79f5) | 0;
          let t = Math.imul(state ^ (state >>> 15), 1 | state);
          t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
          // × 2⁻³² and × ⅛ below: exact, as the divisions are, and cheaper.
          const u = ((t ^ (t >>> 14)) >>> 0) * 2.3283064365386963e-10;
          hours += triangular(u, low[p] ?? 0, mode[p] ?? 0, high[p] ?? 0);
        }
        states[k] = state;
        const d = Math.ceil(hours / perDay);
        days[at + k] = d > 1 ? d : 1;
      }
    }
    if (late) {
      generalBlock(model, K, size, days, es, ef, late, finish, critical);
      finishes.set(finish.subarray(0, size), first);
      continue;
    }
    finish.fill(-1);
    for (let v = 0; v < m; v++) {
      const at = v * K;
      for (let k = 0; k < size; k++) es[at + k] = 0;
      for (let e = predStart[v] ?? 0, end = predStart[v + 1] ?? 0; e < end; e++) {
        const before = (pred[e] ?? 0) * K;
        for (let k = 0; k < size; k++) {
          const after = (ef[before + k] ?? 0) + 1;
          if (after > (es[at + k] ?? 0)) es[at + k] = after;
        }
      }
      for (let k = 0; k < size; k++) {
        const last = (es[at + k] ?? 0) + (days[at + k] ?? 1) - 1;
        ef[at + k] = last;
        if (last > (finish[k] ?? 0)) finish[k] = last;
      }
    }
    // Critical: on a chain of tight dependencies (a task starting the day after the one it
    // waits on ends) back from a task that ends on the finish. The same tasks as zero slack,
    // for the cost of the critical ones' edges instead of a backward pass over every task.
    for (let k = 0; k < size; k++) {
      const end = finish[k] ?? 0;
      stamp++;
      let depth = 0;
      for (let v = 0; v < m; v++)
        if (ef[v * K + k] === end) {
          seen[v] = stamp;
          stack[depth++] = v;
        }
      while (depth > 0) {
        const v = stack[--depth] ?? 0;
        critical[v] = (critical[v] ?? 0) + 1;
        const start = es[v * K + k] ?? 0;
        for (let e = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; e < stop; e++) {
          const p = pred[e] ?? 0;
          if (seen[p] !== stamp && (ef[p * K + k] ?? 0) + 1 === start) {
            seen[p] = stamp;
            stack[depth++] = p;
          }
        }
      }
    }
    finishes.set(finish.subarray(0, size), first);
  }
  return { finishes, critical };
}

/**
 * Whether a model needs the general passes: links other than FS with no lag, tasks in progress,
 * constraints or milestones. Without them, a sample's critical tasks are those on a chain of
 * back-to-back dependencies from the finish, found without a backward pass.
 */
function isGeneral(model: ForecastModel): boolean {
  const { predLink, started, startNoEarlier, finishNoLater } = model;
  const extra = [predLink, started, startNoEarlier, finishNoLater];
  return extra.some((a) => a !== undefined) || model.days.includes(0);
}

/**
 * One block of samples through both of cpm.ts's passes, task v of sample k at v × K + k: `S`
 * and `F` receive the boundaries, `late` the latest finish; each sample's finish day goes to
 * `finish` and each critical task (total float ≤ 0) is counted in `critical`.
 */
function generalBlock(
  model: ForecastModel,
  K: number,
  size: number,
  days: Int32Array,
  S: Int32Array,
  F: Int32Array,
  late: Int32Array,
  finish: Int32Array,
  critical: Uint32Array,
): void {
  const { m, predStart, pred, predLink, started, startNoEarlier, finishNoLater } = model;
  // E of each sample, in `finish` until the last step.
  finish.fill(-1);
  for (let v = 0; v < m; v++) {
    const at = v * K;
    const first = predStart[v] ?? 0;
    const stop = predStart[v + 1] ?? 0;
    if (started?.[v] === 1) {
      for (let k = 0; k < size; k++) {
        S[at + k] = 0;
        F[at + k] = days[at + k] ?? 0;
      }
      for (let e = first; e < stop; e++) {
        const link = predLink?.[e] ?? 0;
        const type = link & 3;
        if ((type & 2) === 0) continue;
        const before = (pred[e] ?? 0) * K;
        const lag = link >> 2;
        for (let k = 0; k < size; k++) {
          const x = finishNeed(type, lag, S[before + k] ?? 0, F[before + k] ?? 0);
          if (x > (F[at + k] ?? 0)) F[at + k] = x;
        }
      }
    } else {
      const least = Math.max(0, startNoEarlier?.[v] ?? 0);
      for (let k = 0; k < size; k++) S[at + k] = least;
      for (let e = first; e < stop; e++) {
        const link = predLink?.[e] ?? 0;
        const type = link & 3;
        const before = (pred[e] ?? 0) * K;
        const lag = link >> 2;
        for (let k = 0; k < size; k++) {
          const x = startNeed(type, lag, S[before + k] ?? 0, F[before + k] ?? 0, days[at + k] ?? 0);
          if (x > (S[at + k] ?? 0)) S[at + k] = x;
        }
      }
      for (let k = 0; k < size; k++) F[at + k] = (S[at + k] ?? 0) + (days[at + k] ?? 0);
    }
    for (let k = 0; k < size; k++)
      if ((F[at + k] ?? 0) > (finish[k] ?? 0)) finish[k] = F[at + k] ?? 0;
  }
  // Backward, last task first: a task's latest finish is final once every successor (a higher
  // number) has pushed into it, and it pushes into its predecessors in turn.
  for (let v = 0; v < m; v++) {
    const bound = finishNoLater?.[v] ?? NO_BOUND;
    for (let k = 0; k < size; k++) late[v * K + k] = Math.min(finish[k] ?? 0, bound);
  }
  for (let v = m - 1; v >= 0; v--) {
    const at = v * K;
    for (let e = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; e < stop; e++) {
      const link = predLink?.[e] ?? 0;
      const type = link & 3;
      const lag = link >> 2;
      const before = (pred[e] ?? 0) * K;
      for (let k = 0; k < size; k++) {
        const x =
          (late[at + k] ?? 0) + lateOffset(type, lag, days[before + k] ?? 0, days[at + k] ?? 0);
        if (x < (late[before + k] ?? 0)) late[before + k] = x;
      }
    }
    for (let k = 0; k < size; k++) {
      const lf = late[at + k] ?? 0;
      const total = Math.min(lf - (days[at + k] ?? 0) - (S[at + k] ?? 0), lf - (F[at + k] ?? 0));
      if (total <= 0) critical[v] = (critical[v] ?? 0) + 1;
    }
  }
  for (let k = 0; k < size; k++)
    finish[k] = (finish[k] ?? -1) < 0 ? -1 : Math.max((finish[k] ?? 0) - 1, 0);
}
