/** Argument parsing for the operator CLI: typed options, clear usage errors. */
import { parseArgs } from 'node:util';
import { parseScopes, ROLES, type Plan, type Role, type Scope } from '../auth/principal.ts';

export class UsageError extends Error {}

export type Options = Record<string, string | boolean | string[] | undefined>;

export function parse(argv: string[], spec: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>): Options {
  try {
    return parseArgs({ args: argv, options: { ...spec, json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values as Options;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function optional(options: Options, name: string): string | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} needs a value`);
  return value.trim();
}

export function plan(value: string | undefined): Plan | undefined {
  if (value === undefined) return undefined;
  if (value !== 'free' && value !== 'pro') throw new UsageError(`--plan must be free or pro, got ${value}`);
  return value;
}

export function role<T extends string>(value: string, allowed: readonly T[] = ROLES as unknown as readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--role must be one of ${allowed.join(', ')}, got ${value}`);
  return value as T;
}

export function scopes(value: string): Scope[] {
  const parsed = parseScopes(value);
  if (!parsed || parsed.length === 0) throw new UsageError(`--scopes must be "all" or space-separated scopes, got ${JSON.stringify(value)}`);
  return parsed;
}

export function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw new UsageError(`--${name} must be a whole number, got ${value}`);
  return n;
}

export function bool(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false, got ${value}`);
  return value === 'true';
}

export function email(value: string): string {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw new UsageError(`--email is not an email address: ${value}`);
  return value;
}

export type { Role };
