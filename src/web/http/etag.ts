/** Entity tags and `If-None-Match` (RFC 9110 §13.1.2: weak comparison). */
import { hash } from 'node:crypto';

/** A strong tag for an opaque validator (a version) or, with no validator, of the bytes. */
export function etagOf(validator: string): string {
  return `"${validator.replace(/["\\]/g, '')}"`;
}

export function etagOfBody(bytes: string | Buffer): string {
  return `"${hash('sha1', bytes, 'base64url')}"`;
}

export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === bare);
}
