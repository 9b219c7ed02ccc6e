/** Argument parsing for the operator CLI: Node's parseArgs, typed options, errors an operator can act on. */
import { parseArgs } from 'node:util';
import { nameProblem } from '../contract/common.schema.ts';
import { MAX_NAME_LENGTH } from '../services/auth/provision.ts';
import {
  parseScopes,
  ROLES,
  type Plan,
  type Role,
  type Scope,
} from '../services/auth/principal.ts';

/** Bad arguments: exit 2, with a pointer to the help of `about` (a command, a group, or '' for the list). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly text?: string,
    public about?: string,
  ) {
    super(message);
  }
}

export type Options = Record<string, string | boolean | string[] | undefined>;

/** One option of a command: how parseArgs reads it, and what its help says. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The placeholder in usage lines: `--name N`, `--plan free|pro`. */
  value?: string;
  /** One line: what the option means. */
  description: string;
  /** Checked before anything else; the usage line shows it without brackets. */
  required?: boolean;
  multiple?: boolean;
}

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: {
    type: 'boolean',
    description: 'print one JSON object on stdout and nothing else (for scripts)',
  },
  help: { type: 'boolean', description: 'show this help' },
} as const satisfies Record<string, OptionSpec>;

/** Reads a command's options (after its name); every problem is a UsageError naming the option. */
export function parse(argv: string[], spec: Record<string, OptionSpec>): Options {
  const options = Object.fromEntries(
    Object.entries({ ...spec, ...COMMON_OPTIONS }).map(([name, o]) => [
      name,
      'multiple' in o && o.multiple ? { type: o.type, multiple: true } : { type: o.type },
    ]),
  );
  let values: Options;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false })
      .values as Options;
  } catch (error) {
    throw new UsageError(explain(error as Error & { code?: string }));
  }
  for (const [name, option] of Object.entries(spec)) if (option.required) required(values, name);
  return values;
}

/** parseArgs' messages, reworded: the option's name first, without advice about positionals. */
function explain(error: Error & { code?: string }): string {
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? '';
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted)} (every value follows its --option)`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(error.message)
        ? `${quoted} takes no value`
        : `${quoted.replace(/ <value>$/, '')} needs a value`;
    default:
      return error.message;
  }
}

export function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function optional(options: Options, name: string): string | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} needs a value`);
  return value.trim();
}

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

export type { Role };
