/**
 * Shared JSON schemas: the error envelope, pagination, ids and dates. Request schemas are
 * TypeBox values: plain JSON Schema to Ajv and the OpenAPI document (TypeBox's own marks are
 * symbol keys, which neither reads), and a static type to the handler through `route()`.
 */
import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ERROR_CODES } from '../../platform/errors.ts';
import type { Schema } from '../http/route.ts';

export const ErrorSchema: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: [...ERROR_CODES] },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
};

/** `{ type: 'string', enum: [...] }` (not TypeBox's `anyOf` of constants), typed as the union of the values. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** `type: [<type>, 'null']` (not an `anyOf`), as the schemas always spelled it. */
export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'], ...options });

/**
 * A property left out of `required` that Ajv (`useDefaults`) fills with its default before
 * any handler runs: optional on the wire, always present in the handler's type.
 */
export const Defaulted = <T extends TSchema>(schema: T): T => Type.Optional(schema) as TSchema as T;

/** Offset pagination shared by every list: `size` 1–100 (default 25) and `from`. */
export const pageQuery = (defaultSize = 25) => ({
  size: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: defaultSize })),
  from: Defaulted(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

export const listOf = (item: Schema): Schema => ({
  type: 'object',
  required: ['total', 'items'],
  properties: { total: { type: 'integer', minimum: 0 }, items: { type: 'array', items: item } },
});

export const idParam = (prefix: string) => Type.String({ minLength: prefix.length + 2, maxLength: 64, pattern: `^${prefix}_[A-Za-z0-9_-]+$` });

export const pathParams = <T extends Record<string, TSchema>>(params: T) => Type.Object(params);

/** ISO 8601 date-time, or a plain `YYYY-MM-DD` date (CONTRACT §1). */
export const dateInput = Type.String({ maxLength: 40, anyOf: [{ format: 'date' }, { format: 'date-time' }] });

export const dateTime: Schema = { type: 'string', format: 'date-time' };
