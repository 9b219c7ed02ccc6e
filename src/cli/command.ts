/**
 * A CLI command is data: its name, one-line summary, options with their meanings and an
 * example drive the parser and the help alike, so the two cannot drift apart.
 */
import type { Sql } from '../storage/db.ts';
import type { Options, OptionSpec } from './args.ts';

export interface Output {
  /** What `--json` prints: one object. */
  result: object;
  /** What a person reads. */
  text: string;
}

export interface Command<I = unknown> {
  /** `migrate`, `workspace create`. */
  name: string;
  /** One line, for `flowplan --help`. */
  summary: string;
  /** The usage after the name, when the options alone would mislead (alternatives, pairs). */
  usage?: string;
  options: Record<string, OptionSpec>;
  /** What `--json` prints, in a few words (`{ "id" }`). */
  json: string;
  /** Paragraphs after the options. */
  notes?: string[];
  examples: string[];
  /** Only `migrate`: may create the database (every other command refuses a missing one). */
  createsDatabase?: boolean;
  /** Checks the options and turns them into the command's input, before any database is opened (UsageError); may read stdin. */
  input(options: Options): I | Promise<I>;
  run(sql: Sql, input: I): Promise<Output>;
}

/** Keeps a command's input type checked between `input` and `run`. */
export function command<I>(spec: Command<I>): Command {
  return spec as Command;
}

/** `2025-01-31 09:05` (UTC): dates in tables. */
export function minute(date: Date | null): string {
  return date ? date.toISOString().slice(0, 16).replace('T', ' ') : '-';
}
