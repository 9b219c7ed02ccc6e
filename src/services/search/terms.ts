/**
 * Turns what a person typed into search terms. Only runs of letters, combining marks and
 * digits survive, so `& | ! ( ) : * ' " \` and the like can never reach the tsquery parser
 * as operators; they separate words, as spaces do.
 */
import type { SearchTerms } from '../../storage/search.store.ts';

/** More words than this add nothing a person means; the rest are dropped. */
const MAX_WORDS = 32;

/** Null when nothing searchable is left (the query was only punctuation). */
export function searchTerms(q: string): SearchTerms | null {
  const words = [...new Set(q.toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [])].slice(
    0,
    MAX_WORDS,
  );
  if (words.length === 0) return null;
  return {
    tsquery: words.map((word) => `${word}:*`).join(' & '),
    words: words.join(' '),
    // Control characters (NUL above all) cannot go into a Postgres text value.
    phrase: q
      .replace(/\p{Cc}/gu, ' ')
      .trim()
      .replace(/\s+/g, ' '),
  };
}
