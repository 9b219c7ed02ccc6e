/**
 * Monte Carlo forecast of a flow's finish (CONTRACT §5): each sample draws the hours of every
 * ranged task from its triangular distribution (low, estimate, high), schedules the open tasks
 * as CPM does (working days, max(1, ceil(hours / 8))) and notes the finish and which tasks were
 * critical. Pure and over typed arrays, so a sample costs one forward and one backward pass.
 *
 * Every sample has a generator of its own, seeded from the forecast's seed and the sample's
 * number: samples split across any number of workers give the same draws, so the same seed
 * gives the same answer on any pool size.
 */
import { HOURS_PER_DAY } from './calendar.ts';

/**
 * The open tasks of a flow, numbered in topological order (a task's predecessors have lower
 * numbers), with only the edges between open tasks: done tasks take no time and hold nothing up.
 */
export interface ForecastModel {
  /** Open tasks. */
  m: number;
  predStart: Uint32Array;
  pred: Uint32Array;
  succStart: Uint32Array;
  succ: Uint32Array;
  /** Working days of each task when nothing is drawn for it. */
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

export function forecastPart(model: ForecastModel, run: ForecastRun): ForecastPart {
  const { m, predStart, pred, succStart, succ, ranged, fixedHours, pieceStart } = model;
  const { low, mode, high } = model;
  const days = model.days.slice();
  const es = new Int32Array(m);
  const ef = new Int32Array(m);
  const ls = new Int32Array(m);
  const critical = new Uint32Array(m);
  const finishes = new Int32Array(run.count);
  const r = ranged.length;
  for (let k = 0; k < run.count; k++) {
    // mulberry32, inline: a call per draw would cost more than the draw.
    let state = sampleState(run.seed, run.first + k);
    for (let j = 0; j < r; j++) {
      let hours = fixedHours[j] ?? 0;
      for (let p = pieceStart[j] ?? 0, end = pieceStart[j + 1] ?? 0; p < end; p++) {
        state = (state + 0x6d2b79f5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        hours += triangular(u, low[p] ?? 0, mode[p] ?? 0, high[p] ?? 0);
      }
      const d = Math.ceil(hours / HOURS_PER_DAY);
      days[ranged[j] ?? 0] = d > 1 ? d : 1;
    }
    let finish = -1;
    for (let v = 0; v < m; v++) {
      let start = 0;
      for (let e = predStart[v] ?? 0, end = predStart[v + 1] ?? 0; e < end; e++) {
        const after = (ef[pred[e] ?? 0] ?? 0) + 1;
        if (after > start) start = after;
      }
      const last = start + (days[v] ?? 1) - 1;
      es[v] = start;
      ef[v] = last;
      if (last > finish) finish = last;
    }
    for (let v = m - 1; v >= 0; v--) {
      let latest = finish;
      for (let e = succStart[v] ?? 0, end = succStart[v + 1] ?? 0; e < end; e++) {
        const before = (ls[succ[e] ?? 0] ?? 0) - 1;
        if (before < latest) latest = before;
      }
      const start = latest - (days[v] ?? 1) + 1;
      ls[v] = start;
      if (start === es[v]) critical[v] = (critical[v] ?? 0) + 1;
    }
    finishes[k] = finish;
  }
  return { finishes, critical };
}
