/**
 * What every CLI test checks of a run: `--json` prints one JSON object and nothing else on
 * stdout, and stderr names the database (its password masked) and says nothing more.
 */
import type { Test } from 'tap';
import { cli } from '../helpers/server.ts';

export type Json = Record<string, unknown>;

/** The stderr line naming a DATABASE_URL database: the URL as given, its password masked. */
export function databaseLine(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = '***';
  return `flowplan: database ${url.toString()} (DATABASE_URL)\n`;
}

/** Runs a command with --json and returns its one object; stdout must hold nothing else, stderr only the database line. */
export async function runJson(t: Test, databaseUrl: string, args: string[]): Promise<Json> {
  const result = await cli(databaseUrl, [...args, '--json']);
  t.equal(result.code, 0, `${args.slice(0, 2).join(' ')} exits 0 ${result.stderr}`);
  t.equal(result.stderr, databaseLine(databaseUrl), 'stderr names the database, and nothing else');
  t.match(result.stdout, /^\{.*\}\n$/s, 'stdout is one JSON object and a newline');
  let parsed: unknown;
  t.doesNotThrow(() => (parsed = JSON.parse(result.stdout)), 'stdout parses whole');
  t.type(parsed, 'object');
  t.notOk(Array.isArray(parsed));
  return parsed as Json;
}

export async function fails(
  t: Test,
  databaseUrl: string,
  args: string[],
  message: RegExp,
): Promise<void> {
  const result = await cli(databaseUrl, args);
  t.not(result.code, 0, `${args.join(' ')}: non-zero exit`);
  t.match(result.stderr, message, `${args.join(' ')}: says why on stderr`);
  if (!args.includes('--json')) t.equal(result.stdout, '', 'nothing on stdout');
}
