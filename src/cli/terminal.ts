/**
 * What the CLI prints reaches the operator's terminal, and names in it were given by tenants
 * (a key's, a person's, a workspace's), some stored before names were held to one line: an
 * escape sequence could move the cursor, recolour or rewrite lines, and a bidirectional control
 * reorder them. Every such character is printed as its `\uXXXX` escape instead.
 */
import { BIDI_CONTROLS, CONTROLS } from '../platform/controls.ts';

const STEERING = new RegExp(`[${CONTROLS}${BIDI_CONTROLS}]`, 'g');

/**
 * `text` with each control character (C0, DEL, C1), line separator and bidirectional control
 * written as `\uXXXX`. In JSON text those characters stand only inside strings, where the same
 * escape means the same character: a --json answer stays the same JSON.
 */
export function escapeControls(text: string): string {
  return text.replace(STEERING, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
