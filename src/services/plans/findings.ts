/**
 * What a reader finds besides the plan: warnings (something changed or left out, the import goes
 * on) and problems (the document cannot be read as it is). A document is refused by its size
 * before anything reads it, as text that is not UTF-8, or with the lines of its problems: each
 * refusal of a readable-sized document is VALIDATION_FAILED with `details.errors`, each naming
 * its line, and nothing is created from it.
 */
import { isUtf8 } from 'node:buffer';
import { DomainError, validationFailed, type ValidationProblem } from '../../platform/errors.ts';
import {
  MAX_IMPORT_BYTES,
  MAX_NAME_LENGTH,
  type ImportWarning,
  type ImportWarningCode,
} from './plan.ts';

/** A problem of an imported document: where it is (line, from 1; column where known) and what. */
export interface DocumentProblem extends ValidationProblem {
  line: number;
  column?: number;
}

/** The most problems one refusal lists: the first ones show what to fix. */
const MAX_PROBLEMS = 50;

export function problem(line: number, message: string, column?: number): DocumentProblem {
  return {
    in: 'body',
    pointer: '',
    line,
    ...(column === undefined ? {} : { column }),
    message: `line ${line}: ${message}`,
  };
}

/** VALIDATION_FAILED listing `problems` (the first MAX_PROBLEMS), each with its line. */
export function unreadable(problems: DocumentProblem[]): DomainError {
  const listed = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return validationFailed(listed, `The document cannot be imported: ${listed[0]?.message}${more}`);
}

/** A document that cannot be read, for one reason at one line. */
export const unreadableAt = (line: number, message: string, column?: number): DomainError =>
  unreadable([problem(line, message, column)]);

/**
 * The document as text: refused by its size first (PAYLOAD_TOO_LARGE, before a byte is decoded),
 * then when it is not UTF-8 (naming the first line that is not), its byte order mark dropped.
 */
export function documentText(body: Uint8Array, what: string): string {
  if (body.byteLength > MAX_IMPORT_BYTES)
    throw new DomainError(
      'PAYLOAD_TOO_LARGE',
      `An imported ${what} is at most ${MAX_IMPORT_BYTES} bytes; this one is ${body.byteLength}`,
      { limit: MAX_IMPORT_BYTES },
    );
  if (!isUtf8(body)) throw unreadableAt(firstNonUtf8Line(body), `the ${what} is not UTF-8 text`);
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The line (from 1) holding the first byte sequence that is not UTF-8 (a line feed is never in one). */
function firstNonUtf8Line(body: Uint8Array): number {
  let line = 1;
  let start = 0;
  let end = body.indexOf(0x0a);
  while (end !== -1 && isUtf8(body.subarray(start, end))) {
    line++;
    start = end + 1;
    end = body.indexOf(0x0a, start);
  }
  return line;
}

const CONTROL = /[\u0000-\u001F\u007F]+/g;

/**
 * A name as a flow holds it: one line (each run of control characters, a line break among them,
 * becomes a space), trimmed, cut to `max` characters (code points) with `shortened` set; null when the
 * file's name is blank.
 */
export function lineName(raw: string, max: number): { name: string | null; shortened: boolean } {
  const name = raw.replace(CONTROL, ' ').trim();
  if (name === '') return { name: null, shortened: false };
  const points = Array.from(name);
  return points.length > max
    ? { name: points.slice(0, max).join('').trimEnd(), shortened: true }
    : { name, shortened: false };
}

/** A reader's warnings and problems as it goes. */
export class Findings {
  readonly warnings: ImportWarning[] = [];
  private readonly problems: DocumentProblem[] = [];

  warn(code: ImportWarningCode, message: string, uid?: number): void {
    this.warnings.push(uid === undefined ? { code, message } : { code, message, uid });
  }

  /** A problem at `line`; the reader reads on to find more, up to MAX_PROBLEMS. */
  fail(line: number, message: string): void {
    this.problems.push(problem(line, message));
    if (this.problems.length >= MAX_PROBLEMS) throw unreadable(this.problems);
  }

  /** Refuses the document when any problem was found. */
  check(): void {
    if (this.problems.length > 0) throw unreadable(this.problems);
  }

  /** A task's name from the file, with the warning a blank or overlong one earns. */
  taskName(raw: string, uid: number): string {
    const { name, shortened } = lineName(raw, MAX_NAME_LENGTH);
    if (name === null) {
      this.warn('NAME_MISSING', `Task ${uid} has no name: it is named "Task ${uid}"`, uid);
      return `Task ${uid}`;
    }
    if (shortened)
      this.warn(
        'NAME_SHORTENED',
        `Task ${uid}'s name is longer than ${MAX_NAME_LENGTH} characters: it is cut there`,
        uid,
      );
    return name;
  }
}
