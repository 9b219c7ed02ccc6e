/**
 * The days MS Project's rules give the tasks of the hand-written fixtures in
 * test/fixtures/mspdi/ (each file works them out beside its tasks), as the flow's schedule shows
 * them: the tables mspdi-dates.unit.test.ts checks, and the import route's tests will.
 */
import type { Days } from './reference-schedule.ts';

export type Row = [
  uid: number,
  name: string,
  es: string,
  ef: string,
  ls: string,
  lf: string,
  tf: number,
  ff: number,
];

/** links.xml: FS+2d, SS+1d, FF−1d, SF+3d, FS−1d, SS−1d, a milestone, a holiday (Wed 01-17). */
export const LINKS: Row[] = [
  // uid name   earliestStart earliestFinish latestStart  latestFinish total free
  [1, 'A', '2024-01-08', '2024-01-10', '2024-01-08', '2024-01-10', 0, 0],
  [2, 'B', '2024-01-15', '2024-01-16', '2024-01-15', '2024-01-16', 0, 0],
  [3, 'C', '2024-01-09', '2024-01-12', '2024-01-11', '2024-01-16', 2, 0],
  [4, 'D', '2024-01-10', '2024-01-11', '2024-01-12', '2024-01-15', 2, 0],
  // E: days 7 … 7 is Thu 01-18, the day after the holiday.
  [5, 'E', '2024-01-18', '2024-01-18', '2024-01-18', '2024-01-18', 0, 0],
  [6, 'F', '2024-01-11', '2024-01-15', '2024-01-15', '2024-01-18', 2, 2],
  // M at boundary 8: shown on day max(8 − 1, 0) = 7, late on LF − 1 = 7.
  [7, 'M', '2024-01-18', '2024-01-18', '2024-01-18', '2024-01-18', 0, 0],
  [8, 'G', '2024-01-19', '2024-01-22', '2024-01-19', '2024-01-22', 0, 0],
  [9, 'H', '2024-01-18', '2024-01-19', '2024-01-19', '2024-01-22', 1, 1],
];

/** summary.xml: a summary with links, a start-no-earlier-than, two finish-no-later-than. */
export const SUMMARY: Row[] = [
  // Kick-off at boundary 0: shown on day 0; late LF − 1 = 3 (Thu 03-07).
  [1, 'Kick-off', '2024-03-04', '2024-03-04', '2024-03-07', '2024-03-07', 4, 0],
  [3, 'Survey', '2024-03-04', '2024-03-05', '2024-03-08', '2024-03-11', 4, 0],
  [4, 'Report', '2024-03-06', '2024-03-08', '2024-03-12', '2024-03-14', 4, 4],
  [5, 'Permit', '2024-03-13', '2024-03-14', '2024-03-13', '2024-03-14', 0, 0],
  // Build after the holiday (Fri 03-15).
  [6, 'Build', '2024-03-18', '2024-03-21', '2024-03-18', '2024-03-21', 0, 0],
  [7, 'Inspect', '2024-03-22', '2024-03-22', '2024-03-22', '2024-03-22', 0, 0],
  [8, 'Handover', '2024-03-22', '2024-03-22', '2024-03-22', '2024-03-22', 0, 0],
  [9, 'Docs', '2024-03-04', '2024-03-05', '2024-03-07', '2024-03-08', 3, 3],
];

export const asDays = ([, , es, ef, ls, lf, tf, ff]: Row): Days => ({
  earliestStart: es,
  earliestFinish: ef,
  latestStart: ls,
  latestFinish: lf,
  totalFloatDays: tf,
  freeFloatDays: ff,
});
