/**
 * The checks of option values that need the API's own rules (a name's, a role's, the scopes),
 * used by the commands' `input`: loaded only for a command that runs, never for the help.
 */
import { nameProblem } from '../contract/common.schema.ts';
import { MAX_NAME_LENGTH } from '../services/auth/provision.ts';
import { parseScopes, ROLES, type Plan, type Scope } from '../services/auth/principal.ts';
import { UsageError } from './args.js';

/**
 * A name (`--name`): one line, held to the rules of every name (no control character, line
 * separator or bidirectional control): it comes back in lists on a terminal, in page titles and
 * mail.
 */
export function name<T extends string | undefined>(value: T): T {
  if (value === undefined) return value;
  const problem = nameProblem(value, MAX_NAME_LENGTH);
  if (problem) throw new UsageError(`--name ${problem}`);
  return value;
}

export function plan(value: string | undefined): Plan | undefined {
  if (value === undefined) return undefined;
  if (value !== 'free' && value !== 'pro')
    throw new UsageError(`--plan must be free or pro, got ${value}`);
  return value;
}

export function role<T extends string>(
  value: string,
  allowed: readonly T[] = ROLES as unknown as readonly T[],
): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`--role must be one of ${allowed.join(', ')}, got ${value}`);
  return value as T;
}

export function scopes(value: string): Scope[] {
  const parsed = parseScopes(value);
  if (!parsed || parsed.length === 0)
    throw new UsageError(
      `--scopes must be "all" or space-separated scopes, got ${JSON.stringify(value)}`,
    );
  return parsed;
}

export function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000)
    throw new UsageError(`--${name} must be a whole number, got ${value}`);
  return n;
}

export function bool(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false')
    throw new UsageError(`--${name} must be true or false, got ${value}`);
  return value === 'true';
}

export function email(value: string): string {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value))
    throw new UsageError(`--email is not an email address: ${value}`);
  return value;
}
