/**
 * A plan as the import and export formats carry it: plain values shaped like a flow's fields
 * (tasks with typed links, milestones, date constraints and progress; a working-day calendar; a
 * start date), with nothing of storage or HTTP. The readers give an ImportedPlan, the writers
 * take an ExportPlan; the routes map them to and from the model.
 */

/** A link's type: which end of the task waited on holds which end of the task that waits. */
export type LinkType = 'FS' | 'SS' | 'FF' | 'SF';

/** The most working days a link's lag (or, negative, its lead) may be. */
export const MAX_LAG_DAYS = 500;
/** The most hours an estimate may be. */
export const MAX_ESTIMATE_HOURS = 100_000;
/** The most tasks one import creates. */
export const MAX_IMPORT_TASKS = 20_000;
/** The largest document an import reads (10 MiB): refused by size before it is parsed. */
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;
/** The most holidays a calendar holds. */
export const MAX_HOLIDAYS = 2_000;
/** The longest task name. */
export const MAX_NAME_LENGTH = 500;

export type ConstraintType = 'startNoEarlierThan' | 'finishNoLaterThan';

export interface PlanConstraint {
  readonly type: ConstraintType;
  /** YYYY-MM-DD. */
  readonly date: string;
}

/** A working-day calendar: ISO weekdays worked (1 = Monday … 7 = Sunday), hours a day, holidays. */
export interface PlanCalendar {
  readonly workingDays: readonly number[];
  readonly hoursPerDay: number;
  /** Ascending, dates unique. */
  readonly holidays: readonly { readonly date: string; readonly name?: string }[];
}

/** Where a task stands: the model's progress (not started, started, done). */
export type PlanProgress = 'open' | 'started' | 'done';

/** What a task is, in the import and export formats alike. */
export interface PlanTaskFields {
  readonly name: string;
  readonly estimateHours: number | null;
  readonly milestone: boolean;
  readonly constraint: PlanConstraint | null;
  readonly progress: PlanProgress;
  /** Hours left of a started task as re-estimated; null: its estimate counts. */
  readonly remainingHours: number | null;
  /** ISO 8601 date-times (UTC). */
  readonly startedAt: string | null;
  readonly completedAt: string | null;
}

/** A link of an imported task: `task` is the index in `ImportedPlan.tasks` of the task waited on. */
export interface ImportedLink {
  readonly task: number;
  readonly type: LinkType;
  readonly lagDays: number;
}

/** Who a file says does a task: an MSPDI resource (name, email) or a CSV `assignee` (email). */
export interface PlanResource {
  /** The MSPDI resource's UID; null from a CSV. */
  readonly uid: number | null;
  readonly name: string | null;
  readonly email: string | null;
}

export interface ImportedTask extends PlanTaskFields {
  /** The task's MSPDI UID, or its CSV `id`: what a warning names it by. */
  readonly uid: number;
  /** One per task waited on, in the file's order. */
  readonly links: readonly ImportedLink[];
  readonly resource: PlanResource | null;
}

export interface ImportedPlan {
  /** The project's title or name; null where the file has none (a CSV). */
  readonly name: string | null;
  /** The project's start date (YYYY-MM-DD); null where the file has none. */
  readonly startDate: string | null;
  /** The project calendar; null where the file has none. */
  readonly calendar: PlanCalendar | null;
  readonly tasks: readonly ImportedTask[];
  readonly warnings: readonly ImportWarning[];
}

/**
 * The schedule of an open task as the flow shows it (YYYY-MM-DD working days, floats in working
 * days): what the MSPDI export writes as MS Project's early and late dates and slack.
 */
export interface TaskSchedule {
  readonly earliestStart: string;
  readonly earliestFinish: string;
  readonly latestStart: string;
  readonly latestFinish: string;
  readonly totalFloatDays: number;
  readonly freeFloatDays: number;
}

export interface ExportLink {
  /** The task waited on: the `id` of another task of the export. */
  readonly taskId: string;
  readonly type: LinkType;
  readonly lagDays: number;
}

export interface ExportTask extends PlanTaskFields {
  readonly id: string;
  readonly links: readonly ExportLink[];
  /** The member doing it; exported as an MSPDI resource and the CSV's `assignee` (email). */
  readonly assignee: { readonly name: string; readonly email: string } | null;
  /** Null for a done task (it is not scheduled). */
  readonly schedule: TaskSchedule | null;
}

export interface ExportPlan {
  readonly name: string;
  /** The schedule's start: the day its days are numbered from. */
  readonly startDate: string;
  readonly calendar: PlanCalendar;
  /** In the flow's order. */
  readonly tasks: readonly ExportTask[];
}

/**
 * Why an import changed or left out something of the file: flowplan cannot represent it, or
 * represents it another way. A closed list, so a client can act on each (the OpenAPI document
 * lists them).
 */
export const IMPORT_WARNING_CODES = [
  'SUMMARY_TASK',
  'RECURRING_TASK',
  'MANUAL_TASK',
  'INACTIVE_TASK',
  'EXTERNAL_TASK',
  'TASK_CALENDAR',
  'RESOURCE_CALENDAR',
  'CALENDAR_SIMPLIFIED',
  'SCHEDULED_FROM_FINISH',
  'CONSTRAINT_UNSUPPORTED',
  'DEADLINE_AS_CONSTRAINT',
  'DEADLINE_IGNORED',
  'MILESTONE_FROM_ZERO_DURATION',
  'MILESTONE_DURATION_DROPPED',
  'ELAPSED_DURATION',
  'ESTIMATE_LIMITED',
  'LAG_ROUNDED',
  'LAG_ELAPSED',
  'LAG_PERCENT',
  'LAG_LIMITED',
  'LINK_DROPPED',
  'LINK_DUPLICATE',
  'NAME_MISSING',
  'NAME_SHORTENED',
  'EXTRA_ASSIGNMENTS',
  'RESOURCE_NOT_MATCHED',
  'COLUMN_IGNORED',
] as const;
export type ImportWarningCode = (typeof IMPORT_WARNING_CODES)[number];

export interface ImportWarning {
  readonly code: ImportWarningCode;
  readonly message: string;
  /** The task's (or resource's) MSPDI UID, or the CSV row's `id`, when one thing is meant. */
  readonly uid?: number;
}
