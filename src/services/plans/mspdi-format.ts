/**
 * MSPDI's constants as the reader and the writer share them (the namespace, the codes of link
 * types, lag formats and constraint types, the extended attribute a flowplan export keeps a
 * task's estimate in) and what the reader's modules pass each other.
 */
import type { LinkType } from './plan.ts';
import type { XmlRecord } from './xml.ts';

/** The namespace of MS Project's XML (2003 to 2019 alike). */
export const MSPDI_NAMESPACE = 'http://schemas.microsoft.com/project';

/** PredecessorLink/Type: 0 = FF, 1 = FS, 2 = SF, 3 = SS. */
export const LINK_TYPE_CODES: readonly LinkType[] = ['FF', 'FS', 'SF', 'SS'];

/** LagFormat and DurationFormat 7: days (of working time). */
export const FORMAT_DAYS = 7;
/** Elapsed (calendar-time) formats: em, eh, ed, ew, emo and their estimated "?" forms. */
export const ELAPSED_FORMATS: ReadonlySet<number> = new Set([4, 6, 8, 10, 12, 36, 38, 40, 42, 44]);
/** Percentage lags (of the predecessor's duration): %, e% and their estimated forms. */
export const PERCENT_FORMATS: ReadonlySet<number> = new Set([19, 20, 51, 52]);

/** ConstraintType codes: the two a flow holds, and the names of the others for warnings. */
export const CONSTRAINT_CODES = { startNoEarlierThan: 4, finishNoLaterThan: 7 } as const;
export const OTHER_CONSTRAINTS: Readonly<Record<number, string>> = {
  1: 'As Late As Possible',
  2: 'Must Start On',
  3: 'Must Finish On',
  5: 'Start No Later Than',
  6: 'Finish No Earlier Than',
};

/**
 * The task field a flowplan export keeps each task's estimate in (MS Project's Task Number1,
 * under this alias): Duration holds the days the flow schedules, which would lose 12 hours read
 * as 2 days of 8. Read back only while Duration still says what the export wrote.
 */
export const ESTIMATE_FIELD_ID = '188743767';
export const ESTIMATE_FIELD_NAME = 'Number1';
export const ESTIMATE_ALIAS = 'flowplan estimateHours';

/** The project's settings every task is read by. */
export interface ProjectSettings {
  readonly minutesPerDay: number;
  /** The working day's first and last minute (DefaultStartTime, DefaultFinishTime). */
  readonly dayStart: number;
  readonly dayEnd: number;
  /** Working weekdays of the project calendar (elapsed time is converted by their share). */
  readonly workingDaysPerWeek: number;
}

/** One Task element of the file, as the reader classified it. */
export interface TaskEntry {
  readonly record: XmlRecord;
  readonly uid: number;
  readonly level: number;
  /** leaf: a task of the plan; summary: not imported, its tasks are; skipped: not imported. */
  kind: 'leaf' | 'summary' | 'skipped';
  /** A leaf's index in the plan's tasks; −1 for the others. */
  index: number;
  /** Its Duration as working minutes (null: none, or unreadable). */
  minutes: number | null;
  readonly parent: TaskEntry | null;
}
