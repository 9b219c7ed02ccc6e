// @ts-check
/**
 * Argument parsing for the operator CLI: Node's parseArgs, typed options, errors an operator can
 * act on. Plain JavaScript (type-checked through its JSDoc), like the commands' specs and the
 * help: `flowplan --help` and a usage error are answered with no TypeScript loader. The checks of
 * values that need the API's vocabulary are input.ts.
 */
import { parseArgs } from 'node:util';

/** Bad arguments: exit 2, with a pointer to the help of `about` (a command, a group, or '' for the list). */
export class UsageError extends Error {
  /**
   * @param {string} message
   * @param {string} [text] printed before the message (the list of commands)
   * @param {string} [about]
   */
  constructor(message, text, about) {
    super(message);
    this.text = text;
    this.about = about;
  }
}

/** @typedef {Record<string, string | boolean | string[] | undefined>} Options */

/**
 * One option of a command: how parseArgs reads it, and what its help says.
 * @typedef {object} OptionSpec
 * @property {'string' | 'boolean'} type
 * @property {string} [value] The placeholder in usage lines: `--name N`, `--plan free|pro`.
 * @property {string} description One line: what the option means.
 * @property {boolean} [required] Checked before anything else; the usage line shows it without brackets.
 * @property {boolean} [multiple]
 */

/** Options every command takes. */
export const COMMON_OPTIONS = /** @satisfies {Record<string, OptionSpec>} */ ({
  json: {
    type: 'boolean',
    description: 'print one JSON object on stdout and nothing else (for scripts)',
  },
  help: { type: 'boolean', description: 'show this help' },
});

/**
 * Reads a command's options (after its name); every problem is a UsageError naming the option.
 * @param {string[]} argv
 * @param {Record<string, OptionSpec>} spec
 * @returns {Options}
 */
export function parse(argv, spec) {
  /** @type {Record<string, OptionSpec>} */
  const all = { ...spec, ...COMMON_OPTIONS };
  const options = Object.fromEntries(
    Object.entries(all).map(([name, o]) => [
      name,
      o.multiple ? { type: o.type, multiple: true } : { type: o.type },
    ]),
  );
  /** @type {Options} */
  let values;
  try {
    values = /** @type {Options} */ (
      parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values
    );
  } catch (error) {
    throw new UsageError(explain(/** @type {Error & { code?: string }} */ (error)));
  }
  for (const [name, option] of Object.entries(spec)) if (option.required) required(values, name);
  return values;
}

/**
 * parseArgs' messages, reworded: the option's name first, without advice about positionals.
 * @param {Error & { code?: string }} error
 */
function explain(error) {
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

/**
 * @param {Options} options
 * @param {string} name
 * @returns {string}
 */
export function required(options, name) {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} is required`);
  return value.trim();
}

/**
 * @param {Options} options
 * @param {string} name
 * @returns {string | undefined}
 */
export function optional(options, name) {
  const value = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} needs a value`);
  return value.trim();
}
