/** Ids for every stored thing: an opaque, unguessable string with a type prefix. */
import { randomBytes } from 'node:crypto';

/** `flw_`, `tsk_`, `usr_`, … followed by 96 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
