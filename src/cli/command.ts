/**
 * What a command does, beside its spec (commands.js): `input` checks the parsed options and
 * turns them into the command's input, `run` does the work on the database. A command's module
 * imports at its top only what its `input` needs; `run` imports the services and stores it uses
 * when it runs, so a command loads no other command's.
 */
import type { Sql } from '../storage/db.ts';
import type { Options } from './args.js';

export interface Output {
  /** What `--json` prints: one object. */
  result: object;
  /** What a person reads. */
  text: string;
}

export interface Implementation<I = unknown> {
  /** Checks the options and turns them into the command's input, before any database is opened (UsageError); may read stdin. */
  input(options: Options): I | Promise<I>;
  run(sql: Sql, input: I): Promise<Output>;
}

/** Keeps a command's input type checked between `input` and `run`. */
export function implement<I>(implementation: Implementation<I>): Implementation {
  return implementation as Implementation;
}

/** `2025-01-31 09:05` (UTC): dates in tables. */
export function minute(date: Date | null): string {
  return date ? date.toISOString().slice(0, 16).replace('T', ' ') : '-';
}
