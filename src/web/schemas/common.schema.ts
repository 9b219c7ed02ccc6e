/** Shared JSON schemas: the error envelope, pagination, ids and dates. */
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
        code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
};

/** Offset pagination shared by every list: `size` 1–100 (default 25) and `from`. */
export const pageQuery = (defaultSize = 25): Record<string, Schema> => ({
  size: { type: 'integer', minimum: 1, maximum: 100, default: defaultSize },
  from: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 },
});

export const listOf = (item: Schema): Schema => ({
  type: 'object',
  required: ['total', 'items'],
  properties: { total: { type: 'integer', minimum: 0 }, items: { type: 'array', items: item } },
});

export const idParam = (prefix: string): Schema => ({ type: 'string', minLength: prefix.length + 2, maxLength: 64, pattern: `^${prefix}_[A-Za-z0-9_-]+$` });

export const pathParams = (params: Record<string, Schema>): Schema => ({
  type: 'object',
  required: Object.keys(params),
  properties: params,
});

/** ISO 8601 date-time, or a plain `YYYY-MM-DD` date (CONTRACT §1). */
export const dateInput: Schema = {
  type: 'string',
  maxLength: 40,
  anyOf: [{ format: 'date' }, { format: 'date-time' }],
};

export const dateTime: Schema = { type: 'string', format: 'date-time' };
