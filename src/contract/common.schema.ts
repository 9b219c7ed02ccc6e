/**
 * Shared JSON schemas: the error envelope, pagination, ids, dates and text. Schemas are
 * TypeBox values: plain JSON Schema to Ajv and the OpenAPI document (TypeBox's own marks are
 * symbol keys, which neither reads), and a static type to the handler through `route()` and to
 * the services through `Static<>`.
 */
import {
  Type,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';
import { ERROR_CODES } from '../platform/errors.ts';
import { BIDI_CONTROLS, CONTROLS } from '../platform/controls.ts';
import { FIRST_DAY, LAST_DAY } from './vocabulary.ts';

/** A JSON schema object (draft 2020-12, the dialect of OpenAPI 3.1 and of the validator). */
export type Schema = Record<string, unknown>;

/**
 * What each pattern of the schemas asks for, in words: a refusal quotes these, never a
 * regular expression. A schema registers its pattern through this as it declares it.
 */
const patternWords = new Map<string, string>();
export function wordedPattern(pattern: string, words: string): string {
  // Words are found by the pattern's text: a second wording of the same text would replace the first everywhere.
  const known = patternWords.get(pattern);
  if (known !== undefined && known !== words)
    throw new Error(`pattern ${pattern} is already worded "${known}"`);
  patternWords.set(pattern, words);
  return pattern;
}

/** The words registered for a pattern, if a schema worded it. */
export const patternInWords = (pattern: string): string | undefined => patternWords.get(pattern);

/** `{ type: 'string', enum: [...] }` (not TypeBox's `anyOf` of constants), typed as the union of the values. */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** `type: [<type>, 'null']` (not an `anyOf`), as the schemas always spelled it. */
export const Nullable = <T extends TSchema>(
  schema: T,
  options: SchemaOptions = {},
): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'], ...options });

/**
 * A property left out of `required` that Ajv (`useDefaults`) fills with its default before
 * any handler runs: optional on the wire, always present in the handler's type.
 */
export const Defaulted = <T extends TSchema>(schema: T): T => Type.Optional(schema) as TSchema as T;

/** Offset pagination shared by every list: `size` 1–`maxSize` (100 unless a list allows more), default `defaultSize`, and `from`. */
export const pageQuery = (defaultSize = 25, maxSize = 100) => ({
  size: Defaulted(Type.Integer({ minimum: 1, maximum: maxSize, default: defaultSize })),
  from: Defaulted(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({ total: Type.Integer({ minimum: 0 }), items: Type.Array(item) });

const NOT_BLANK = wordedPattern('\\S', 'must not be blank');
// Linear patterns only (no nested quantifiers): a hostile megabyte string costs one pass.
const NO_CONTROL = wordedPattern(
  `^[^${CONTROLS}]*$`,
  'must not contain control characters (U+0000–U+001F, U+007F–U+009F) or line separators (U+2028, U+2029), tab and line breaks included: a name is one line',
);
/**
 * Unicode's bidirectional controls (Bidi_Control): invisible, they make the text after them show
 * in another order than it reads (`invoice`, U+202E, `fdp.exe` shows as `invoiceexe.pdf`), in a
 * page title, a mail subject or an operator's terminal alike. Refused rather than dropped, as
 * control characters are: what is stored is what the client sent, and a name's direction comes
 * from its letters.
 */
const NO_BIDI = wordedPattern(
  `^[^${BIDI_CONTROLS}]*$`,
  'must not contain bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which show text in another order than it reads',
);
// Ajv matches with the `u` flag, so a paired surrogate is one code point outside this class and
// only a lone half is in it: Postgres refuses such text, and no renderer can draw it.
const WELL_FORMED = wordedPattern(
  '^[^\\uD800-\\uDFFF]*$',
  'must be well-formed Unicode (no unpaired surrogate)',
);
const NO_CONTROL_BUT_LINES = wordedPattern(
  '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$',
  'must not contain control characters (U+0000–U+001F, U+007F) other than tab and line breaks',
);

/**
 * A name, title, tag or file name: one line of 1–`maxLength` characters, not blank, with no
 * control character (C0, DEL and C1; so no tab or line break), line separator or bidirectional
 * control. Renderings draw names on one line, a control character is not even allowed in the
 * XML of an SVG, and names reach page titles, mail subjects and the operator's terminal.
 */
export const nameText = (maxLength: number, options: SchemaOptions = {}) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: NO_CONTROL,
    allOf: [{ pattern: NOT_BLANK }, { pattern: NO_BIDI }, { pattern: WELL_FORMED }],
    ...options,
  });

/**
 * What is wrong with a name that comes in by a form or the command line, not through a schema
 * (a key's, a client's, a person's, a workspace's): `nameText`'s rules and words; null when
 * nothing. `text` is taken as given (callers trim first).
 */
export function nameProblem(text: string, maxLength: number): string | null {
  if (!new RegExp(NOT_BLANK, 'u').test(text)) return patternWords.get(NOT_BLANK)!;
  if ([...text].length > maxLength) return `must be at most ${maxLength} characters`;
  for (const pattern of [NO_CONTROL, NO_BIDI, WELL_FORMED])
    if (!new RegExp(pattern, 'u').test(text)) return patternWords.get(pattern)!;
  return null;
}

/** One line that may be empty (a search term, a filter): as `nameText`, but blank is allowed. */
export const lineText = (maxLength: number, options: SchemaOptions = {}) =>
  Type.String({
    maxLength,
    pattern: NO_CONTROL,
    allOf: [{ pattern: NO_BIDI }, { pattern: WELL_FORMED }],
    ...options,
  });

/**
 * Free text (descriptions, notes, comments): tab and line breaks (LF, CR) kept, every other
 * control character refused. `notBlank` also refuses text of white space only.
 */
export const freeText = (
  maxLength: number,
  { notBlank = false, ...options }: SchemaOptions & { notBlank?: boolean } = {},
) =>
  Type.String({
    ...(notBlank ? { minLength: 1 } : {}),
    maxLength,
    pattern: NO_CONTROL_BUT_LINES,
    allOf: [...(notBlank ? [{ pattern: NOT_BLANK }] : []), { pattern: WELL_FORMED }],
    ...options,
  });

export const idParam = (prefix: string) =>
  Type.String({
    minLength: prefix.length + 2,
    maxLength: 64,
    pattern: wordedPattern(`^${prefix}_[A-Za-z0-9_-]+$`, `must be an id of the form ${prefix}_…`),
  });

/**
 * An id a route looks up (in the path or a body): any id of 1–100 characters may be asked for
 * (a wrong one is 404), but one holding a control character is no id at all and is refused at
 * its own pointer before it reaches Postgres (which refuses a NUL in text).
 */
const NO_CONTROL_IN_ID = wordedPattern(
  '^[^\\u0000-\\u001F\\u007F]+$',
  'must not contain control characters',
);
export const lookupId = (options: SchemaOptions = {}) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: NO_CONTROL_IN_ID,
    allOf: [{ pattern: WELL_FORMED }],
    ...options,
  });

export const pathParams = <T extends Record<string, TSchema>>(params: T) => Type.Object(params);

/** ISO 8601 date-time, or a plain `YYYY-MM-DD` date (CONTRACT §1), in the range src/services/flows/dates.ts enforces. */
export const dateInput = Type.String({
  maxLength: 40,
  anyOf: [{ format: 'date' }, { format: 'date-time' }],
  description: `A date (YYYY-MM-DD, that day's UTC midnight) or an ISO 8601 date-time, between ${FIRST_DAY} and ${LAST_DAY} (UTC); outside is 400 VALIDATION_FAILED`,
});

export const dateTime = Type.String({ format: 'date-time' });

/**
 * A flow's due date where spec §2 types it a date-time (flow summaries, work views, digest);
 * the schedule and the public view give the same due date as its UTC day, `YYYY-MM-DD`.
 */
export const dueDateTime = Type.String({
  format: 'date-time',
  description:
    "The due date as an instant (a YYYY-MM-DD given is that day's 00:00 UTC); the schedule and the public view give its UTC day as YYYY-MM-DD, and onTrack compares days",
});

export const ErrorSchema = Type.Object({
  error: Type.Object({
    code: StringEnum(ERROR_CODES),
    message: Type.String(),
    details: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
    ),
  }),
});
