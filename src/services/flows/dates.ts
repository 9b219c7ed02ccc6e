/**
 * Date inputs: ISO 8601 date-times or plain `YYYY-MM-DD` dates (CONTRACT §1), between
 * FIRST_DAY and LAST_DAY (UTC) so that every date the service answers stays a YYYY-MM-DD.
 */
import { FIRST_DAY, LAST_DAY } from '../../contract/vocabulary.ts';
import { validationFailed, type Location } from '../../platform/errors.ts';

const FIRST_MS = Date.parse(`${FIRST_DAY}T00:00:00Z`);
const AFTER_LAST_MS = Date.parse(`${LAST_DAY}T00:00:00Z`) + 86_400_000;

/** The instant `value` names, or VALIDATION_FAILED at `pointer` of `where`. */
export function parseInstant(value: string, where: Location, pointer: string): Date {
  // A bare date is that day's UTC midnight (Date.parse would agree; said here for the reader).
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms))
    throw validationFailed([
      { in: where, pointer, message: 'must be a date (YYYY-MM-DD) or a date-time' },
    ]);
  if (ms < FIRST_MS || ms >= AFTER_LAST_MS) {
    throw validationFailed([
      { in: where, pointer, message: `must be between ${FIRST_DAY} and ${LAST_DAY} (UTC)` },
    ]);
  }
  return new Date(ms);
}

export function parseDateInput(value: string, pointer: string): string {
  return parseInstant(value, 'body', pointer).toISOString();
}
