/** Date inputs: ISO 8601 date-times or plain `YYYY-MM-DD` dates (CONTRACT §1), stored as instants. */
import { validationFailed } from '../../platform/errors.ts';

export function parseDateInput(value: string, pointer: string): string {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw validationFailed([{ in: 'body', pointer, message: 'is not an ISO 8601 date or date-time' }]);
  return new Date(ms).toISOString();
}
