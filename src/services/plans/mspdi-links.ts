/**
 * An MSPDI file's links (PredecessorLink) as a flow's: Type 0/1/2/3 is FF/FS/SF/SS, LinkLag (in
 * tenths of a minute) over the project's minutes a day is lagDays, rounded to whole working days
 * with a warning when it is not whole; an elapsed lag is converted by the calendar's share of
 * working time and a percentage lag by the predecessor's duration, each with a warning. A link to
 * or from a summary task applies to each task beneath it. A flow joins two tasks by one link: a
 * second one between them (a direct link and one through a summary) is a warning, and so is a
 * link the flow cannot hold (to another project, to a task not imported, from a task to itself).
 */
import type { Findings } from './findings.ts';
import {
  ELAPSED_FORMATS,
  FORMAT_DAYS,
  LINK_TYPE_CODES,
  PERCENT_FORMATS,
  type ProjectSettings,
  type TaskEntry,
} from './mspdi-format.ts';
import { parseBoolean, parseInteger } from './mspdi-values.ts';
import { MAX_LAG_DAYS, type ImportedLink } from './plan.ts';
import { lineOf, recordsOf, type XmlRecord } from './xml.ts';

/** Each summary's leaves, the plan's indexes of the tasks beneath it at any depth, in order. */
export function leavesBeneath(entries: readonly TaskEntry[]): Map<TaskEntry, number[]> {
  const beneath = new Map<TaskEntry, number[]>();
  for (const entry of entries) {
    if (entry.kind !== 'leaf') continue;
    for (let p = entry.parent; p !== null; p = p.parent) {
      const list = beneath.get(p);
      if (list === undefined) beneath.set(p, [entry.index]);
      else list.push(entry.index);
    }
  }
  return beneath;
}

/** The links of each of the plan's `count` tasks, by index. */
export function readLinks(
  entries: readonly TaskEntry[],
  beneath: Map<TaskEntry, number[]>,
  count: number,
  settings: ProjectSettings,
  findings: Findings,
): ImportedLink[][] {
  const byUid = new Map(entries.map((e) => [e.uid, e]));
  const links: ImportedLink[][] = Array.from({ length: count }, () => []);
  const joined: Set<number>[] = Array.from({ length: count }, () => new Set());
  const tasksOf = (e: TaskEntry) => (e.kind === 'leaf' ? [e.index] : (beneath.get(e) ?? []));
  for (const entry of entries) {
    if (entry.kind === 'skipped') continue;
    for (const link of recordsOf(entry.record, 'PredecessorLink')) {
      const uid = entry.uid;
      const dropped = (why: string) =>
        findings.warn('LINK_DROPPED', `A link of task ${uid} is not kept: ${why}`, uid);
      const { PredecessorUID: predText = '', Type: typeText = '1' } = link.fields;
      const predUid = parseInteger(predText);
      const type = LINK_TYPE_CODES[parseInteger(typeText) ?? -1];
      if (predUid === null || type === undefined) {
        findings.fail(
          lineOf(link, predUid === null ? 'PredecessorUID' : 'Type'),
          predUid === null
            ? `a link of task ${uid} has no PredecessorUID (or not a number: "${predText}")`
            : `a link of task ${uid} has Type "${typeText}": 0 (FF), 1 (FS), 2 (SF) or 3 (SS)`,
        );
        continue;
      }
      if (parseBoolean(link.fields.CrossProject ?? '0') === true) {
        dropped(`it comes from another project`);
        continue;
      }
      const pred = byUid.get(predUid);
      if (pred === undefined || pred.kind === 'skipped') {
        dropped(`task ${predUid} is not imported`);
        continue;
      }
      const lagDays = lagOf(link, pred, uid, settings, findings);
      if (lagDays === null) continue;
      const empty = [entry, pred].find((e) => tasksOf(e).length === 0);
      if (empty !== undefined) dropped(`the summary task ${empty.uid} has no task beneath it`);
      for (const s of tasksOf(entry))
        for (const p of tasksOf(pred)) {
          if (p === s) dropped(`it joins a task to itself through a summary`);
          else if (joined[s]?.has(p))
            findings.warn(
              'LINK_DUPLICATE',
              `Task ${uid} waits on task ${predUid} twice (directly or through a summary): the first link is kept`,
              uid,
            );
          else {
            joined[s]?.add(p);
            links[s]?.push({ task: p, type, lagDays });
          }
        }
    }
  }
  return links;
}

/** A link's lag in whole working days (warned of where converted, rounded or held), or null. */
function lagOf(
  link: XmlRecord,
  pred: TaskEntry,
  uid: number,
  settings: ProjectSettings,
  findings: Findings,
): number | null {
  const { LinkLag: lagText = '0', LagFormat: formatText = String(FORMAT_DAYS) } = link.fields;
  const lag = parseInteger(lagText);
  const format = parseInteger(formatText);
  if (lag === null || format === null) {
    findings.fail(
      lineOf(link, lag === null ? 'LinkLag' : 'LagFormat'),
      `a link of task ${uid} has ${lag === null ? `LinkLag "${lagText}"` : `LagFormat "${formatText}"`}, not a whole number`,
    );
    return null;
  }
  if (lag === 0) return 0;
  let days: number;
  if (PERCENT_FORMATS.has(format)) {
    days = (lag / 100) * ((pred.minutes ?? 0) / settings.minutesPerDay);
    findings.warn(
      'LAG_PERCENT',
      `Task ${uid}'s lag of ${lag}% of task ${pred.uid}'s duration is read as ${whole(days)} working days`,
      uid,
    );
  } else if (ELAPSED_FORMATS.has(format)) {
    days = ((lag / 10 / 1440) * settings.workingDaysPerWeek) / 7;
    findings.warn(
      'LAG_ELAPSED',
      `Task ${uid}'s lag of ${round2(lag / 10 / 1440)} elapsed days is read as ${whole(days)} working days`,
      uid,
    );
  } else {
    days = lag / 10 / settings.minutesPerDay;
    if (!Number.isInteger(days))
      findings.warn(
        'LAG_ROUNDED',
        `Task ${uid}'s lag of ${round2(days)} working days is rounded to ${whole(days)}`,
        uid,
      );
  }
  const held = Math.max(-MAX_LAG_DAYS, Math.min(MAX_LAG_DAYS, whole(days)));
  if (held !== whole(days))
    findings.warn(
      'LAG_LIMITED',
      `Task ${uid}'s lag of ${whole(days)} working days is held to ${held}: a lag is at most ${MAX_LAG_DAYS}`,
      uid,
    );
  return held;
}

/** Whole days, rounded half away from zero (a lead of 1.5 days is 2 days, as a lag of 1.5). */
const whole = (days: number) => Math.sign(days) * Math.round(Math.abs(days)) || 0;
const round2 = (n: number) => Math.round(n * 100) / 100;
