/**
 * Characters that steer how the text around them is shown instead of being shown, as bodies of
 * a regular expression's character class (source text, with `\u` escapes): the schemas refuse
 * them in one-line names (src/contract/common.schema.ts), and what shows stored text that
 * predates that rule neutralises them (platform/html.ts `oneLine`, the CLI's tables).
 */

/** C0 controls, DEL, C1 controls (U+009B is a terminal's CSI), and the line and paragraph separators. */
export const CONTROLS = '\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029';

/** Unicode's bidirectional controls (Bidi_Control): marks, embeddings, overrides and isolates. */
export const BIDI_CONTROLS = '\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
