/** Ids for every stored thing: an opaque, unguessable string with a type prefix. */
import { randomBytes } from 'node:crypto';

/** `flw_`, `tsk_`, `usr_`, … followed by 96 random bits. */
export function newId(prefix: string): string {
  // Joined in a buffer: a joined string would be a rope of two (three objects where one will
  // do), and a hot 100k-task flow holds its ids for as long as it stays in memory.
  return Buffer.from(`${prefix}_${randomBytes(12).toString('base64url')}`, 'latin1').toString(
    'latin1',
  );
}
