/**
 * MSPDI documents for the tests, small and written out in full: a project's fields, its
 * calendars, tasks (with links and extended attributes), resources and assignments, as MS Project
 * lays them out. Values are written as given (a test of a malformed value gives it malformed).
 */
import { DomainError } from '../../../src/platform/errors.ts';

export type Fields = Record<string, string | number>;

/** A Task's fields, and its PredecessorLink and ExtendedAttribute elements. */
export interface TaskSpec {
  [field: string]: string | number | Fields[] | undefined;
  UID: number | string;
  links?: Fields[];
  attributes?: Fields[];
}

export interface DocumentSpec {
  project?: Fields;
  /** Calendars as raw XML (each a <Calendar>…</Calendar>); default: the standard one, UID 1. */
  calendars?: string[];
  /** ExtendedAttributes definitions as raw XML. */
  extendedAttributes?: string;
  tasks?: TaskSpec[];
  resources?: Fields[];
  assignments?: Fields[];
  /** Raw XML placed last inside Project. */
  extra?: string;
}

export const NS = 'http://schemas.microsoft.com/project';

const leaves = (fields: Fields, indent: string) =>
  Object.entries(fields)
    .map(([name, value]) => `${indent}<${name}>${value}</${name}>`)
    .join('\n');

const WORKING = `<WorkingTimes><WorkingTime><FromTime>08:00:00</FromTime><ToTime>12:00:00</ToTime></WorkingTime><WorkingTime><FromTime>13:00:00</FromTime><ToTime>17:00:00</ToTime></WorkingTime></WorkingTimes>`;

/** A WeekDay of DayType `dayType` (1 = Sunday … 7 = Saturday), 8 hours when working. */
export const weekDay = (dayType: number, working: boolean, times = WORKING) =>
  `<WeekDay><DayType>${dayType}</DayType><DayWorking>${working ? 1 : 0}</DayWorking>${working ? times : ''}</WeekDay>`;

/** An exception day (or days) as MS Project 2003 lists them: WeekDay of DayType 0. */
export const exceptionDay = (from: string, to = from, working = false) =>
  `<WeekDay><DayType>0</DayType><DayWorking>${working ? 1 : 0}</DayWorking><TimePeriod><FromDate>${from}T00:00:00</FromDate><ToDate>${to}T23:59:00</ToDate></TimePeriod>${working ? WORKING : ''}</WeekDay>`;

/** A calendar: UID, name, and its WeekDays (and what else follows them) as XML. */
export const calendar = (uid: number, inner: string, more = '') =>
  `<Calendar><UID>${uid}</UID><Name>Calendar ${uid}</Name>${more}<WeekDays>${inner}</WeekDays></Calendar>`;

/** Monday to Friday, 08:00–17:00 with an hour's lunch. */
export const STANDARD_DAYS = [1, 2, 3, 4, 5, 6, 7]
  .map((d) => weekDay(d, d >= 2 && d <= 6))
  .join('');

export function mspdi(spec: DocumentSpec = {}): string {
  const project = {
    Name: 'Plan.xml',
    StartDate: '2024-01-08T08:00:00',
    CalendarUID: 1,
    MinutesPerDay: 480,
    ...spec.project,
  };
  const calendars = spec.calendars ?? [calendar(1, STANDARD_DAYS)];
  const tasks = (spec.tasks ?? []).map(({ links = [], attributes = [], ...fields }) =>
    [
      '\t\t<Task>',
      leaves(fields as Fields, '\t\t\t'),
      ...links.map(
        (l) => `\t\t\t<PredecessorLink>\n${leaves(l, '\t\t\t\t')}\n\t\t\t</PredecessorLink>`,
      ),
      ...attributes.map(
        (a) => `\t\t\t<ExtendedAttribute>\n${leaves(a, '\t\t\t\t')}\n\t\t\t</ExtendedAttribute>`,
      ),
      '\t\t</Task>',
    ].join('\n'),
  );
  const records = (name: string, items: Fields[] | undefined) =>
    items === undefined
      ? ''
      : `\t<${name}s>\n${items.map((i) => `\t\t<${name}>\n${leaves(i, '\t\t\t')}\n\t\t</${name}>`).join('\n')}\n\t</${name}s>\n`;
  return [
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
    `<Project xmlns="${NS}">`,
    leaves(project, '\t'),
    spec.extendedAttributes === undefined
      ? ''
      : `\t<ExtendedAttributes>${spec.extendedAttributes}</ExtendedAttributes>`,
    `\t<Calendars>${calendars.join('')}</Calendars>`,
    `\t<Tasks>\n${tasks.join('\n')}\n\t</Tasks>`,
    records('Resource', spec.resources) + records('Assignment', spec.assignments),
    spec.extra ?? '',
    '</Project>',
  ].join('\n');
}

/** A task of `hours` hours (whole days of 8 unless told), auto-scheduled. */
export const task = (uid: number, name: string, more: Omit<TaskSpec, 'UID'> = {}) => ({
  UID: uid,
  ID: uid,
  Name: name,
  OutlineLevel: 1,
  Duration: 'PT8H0M0S',
  ...more,
});

/** A link from task `uid`: Type 1 (FS) and no lag unless told. */
export const link = (uid: number, more: Fields = {}): Fields => ({
  PredecessorUID: uid,
  Type: 1,
  LinkLag: 0,
  LagFormat: 7,
  ...more,
});

export const bytes = (text: string) => Buffer.from(text, 'utf8');

/** What refused a read: the DomainError's code, message and problems (fails on anything else). */
export function refusal(read: () => unknown): {
  code: string;
  message: string;
  errors: { line: number; column?: number; message: string }[];
} {
  try {
    read();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const errors = (error.details?.errors ?? []) as { line: number; message: string }[];
    return { code: error.code, message: error.message, errors };
  }
  throw new Error('the document was read, not refused');
}
