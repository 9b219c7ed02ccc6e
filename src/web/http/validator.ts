/**
 * ajv (draft 2020-12, the dialect of OpenAPI 3.1) compiling the very schema objects the
 * OpenAPI document publishes. Failures become 400 VALIDATION_FAILED listing each problem
 * with its JSON pointer.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { validationFailed, type Location, type ValidationProblem } from '../../platform/errors.ts';
import { count } from '../../platform/plural.ts';
import { patternInWords, type Schema } from '../../contract/common.schema.ts';

function makeAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    // A command list's `oneOf` is told apart by `op`: only that op's schema judges the item.
    discriminator: true,
  });
  addFormats.default(ajv);
  return ajv;
}

const bodies = makeAjv(false);
// Query and path values arrive as strings: coerce them to the declared types.
const strings = makeAjv(true);

/** `indexedList`: a list's pointer (`/commands`) whose failing item is named as `details.index`. */
export function compile<T>(
  schema: Schema,
  location: Location,
  indexedList?: string,
): (value: unknown) => T {
  // Compiled on first use: compiling every route's schemas took 0.2-0.3 s of CPU at each start
  // (every server a test starts), for routes a process may never serve.
  let validate: ValidateFunction | null = null;
  const item = indexedList ? new RegExp(`^${indexedList}/(\\d+)(?:/|$)`) : null;
  return (value: unknown): T => {
    validate ??= (location === 'body' ? bodies : strings).compile(schema);
    if (validate(value)) return value as T;
    const found = problems(validate.errors ?? [], location, schema);
    const index = item?.exec(found[0]?.pointer ?? '')?.[1];
    throw validationFailed(found, undefined, index === undefined ? {} : { index: Number(index) });
  };
}

function problems(errors: ErrorObject[], location: Location, root: Schema): ValidationProblem[] {
  const out: (ValidationProblem & { schemaPath: string; keyword: string })[] = [];
  // Enough to word the first 50 (an anyOf's alternatives come just before it), and no more work.
  for (const error of errors.slice(0, 500)) {
    let pointer = error.instancePath;
    let message = words(error);
    if (error.keyword === 'additionalProperties') {
      pointer += `/${escape(String(error.params.additionalProperty))}`;
      message = 'is not a known field';
    } else if (error.keyword === 'discriminator') {
      pointer += `/${escape(String(error.params.tag))}`;
      message = `must be one of: ${discriminated(error, root)}`;
    } else if (error.keyword === 'required') {
      pointer += `/${escape(String(error.params.missingProperty))}`;
      message = 'is required';
    } else if (error.keyword === 'anyOf') {
      // ajv lists each failed alternative before the anyOf itself: one sentence names them all.
      const branch = `${error.schemaPath}/`;
      const alternatives = out.filter(
        (p) => p.pointer === pointer && p.schemaPath.startsWith(branch),
      );
      if (alternatives.length > 0) {
        // An alternative of the value's own type says more than "must be null" beside it.
        const fitting = alternatives.filter((p) => p.keyword !== 'type');
        message = either((fitting.length > 0 ? fitting : alternatives).map((p) => p.message));
        out.splice(0, out.length, ...out.filter((p) => !alternatives.includes(p)));
      }
    }
    out.push({
      in: location,
      pointer,
      message,
      schemaPath: error.schemaPath,
      keyword: error.keyword,
    });
  }
  return out
    .slice(0, 50)
    .map(({ in: where, pointer, message }) => ({ in: where, pointer, message }));
}

/** The values a discriminated `oneOf` tells its alternatives apart by (a command's ops), read from the schema. */
function discriminated(error: ErrorObject, root: Schema): string {
  let at: unknown = root;
  for (const segment of error.schemaPath.split('/').slice(1, -1))
    at = (at as Record<string, unknown> | undefined)?.[
      segment.replace(/~1/g, '/').replace(/~0/g, '~')
    ];
  const alternatives = ((at as Schema | undefined)?.oneOf ?? []) as {
    properties?: Record<string, { const?: unknown }>;
  }[];
  const tag = String(error.params.tag);
  return alternatives.map((a) => String(a.properties?.[tag]?.const)).join(', ');
}

const FORMAT_WORDS: Record<string, string> = {
  date: 'must be a date (YYYY-MM-DD)',
  'date-time': 'must be a date-time (YYYY-MM-DDThh:mm:ssZ, or with an offset such as +02:00)',
  email: 'must be an email address',
  uri: 'must be an absolute URL',
};

/** What the value must be, in words a person can act on: allowed values, never a regular expression. */
function words(error: ErrorObject): string {
  switch (error.keyword) {
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(error.params.allowedValue)}`;
    case 'pattern':
      return patternInWords(String(error.params.pattern)) ?? 'is not in the expected form';
    case 'format':
      return (
        FORMAT_WORDS[String(error.params.format)] ??
        `must be a valid ${String(error.params.format)}`
      );
    case 'anyOf':
      return 'matches none of the allowed forms';
    case 'minLength':
      return error.params.limit === 1
        ? 'must not be empty'
        : `must be at least ${count(Number(error.params.limit), 'character')} long`;
    case 'maxLength':
      return `must be at most ${count(Number(error.params.limit), 'character')} long`;
    case 'minItems':
      return `must have at least ${count(Number(error.params.limit), 'item')}`;
    case 'maxItems':
      return `must have at most ${count(Number(error.params.limit), 'item')}`;
    case 'uniqueItems': {
      const [a, b] = [Number(error.params.i), Number(error.params.j)].sort((x, y) => x - y);
      return `must not list the same item twice (items ${a} and ${b} are equal)`;
    }
    case 'minProperties':
      return `must have at least ${count(Number(error.params.limit), 'field')}`;
    default:
      return error.message ?? 'is not valid';
  }
}

/** "must be a date (…)" and "must be null" → "must be a date (…) or null". */
function either(messages: string[]): string {
  const unique = [...new Set(messages)];
  const prefix = 'must be ';
  if (unique.every((m) => m.startsWith(prefix)))
    return prefix + unique.map((m) => m.slice(prefix.length)).join(' or ');
  return unique.join(' or ');
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
