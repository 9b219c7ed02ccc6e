/** Entity tags (RFC 9110 §8.8.3); `fresh` compares them with If-None-Match (conditional.ts). */
import { hash } from 'node:crypto';

/** A strong tag for an opaque validator (a version) or, with no validator, of the bytes. */
export function etagOf(validator: string): string {
  return `"${validator.replace(/["\\]/g, '')}"`;
}

export function etagOfBody(bytes: string | Buffer): string {
  return `"${hash('sha1', bytes, 'base64url')}"`;
}
