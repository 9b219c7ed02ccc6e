/**
 * Server-rendered markup (public views, the web app, emails, SVG diagrams): a tagged
 * template that escapes every interpolated value, so a name like `"><img onerror=…>` or
 * `</svg>` is always text. Only `Html` values (built by `html` or `trusted`) pass unescaped.
 */

import { BIDI_CONTROLS } from './controls.ts';

export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

/**
 * What XML 1.0 forbids even as a character reference: C0 controls but tab, LF and CR, U+FFFE,
 * U+FFFF and unpaired surrogates. Text stored before input refused them may hold them, and one
 * in an SVG makes it unreadable to every XML parser (resvg: no PNG). Shown as U+FFFD.
 */
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text made safe for element content and quoted attribute values, in HTML and SVG alike (and well-formed XML). */
export function escapeHtml(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const BIDI = new RegExp(`[${BIDI_CONTROLS}]`, 'g');

/**
 * Text drawn on one line (a name in a diagram box, a page or mail title, a mail subject, a PDF
 * cell): line breaks, tabs and every other control character become one space, so a stored
 * newline cannot push a line onto its neighbour; bidirectional controls are dropped, so a stored
 * override cannot show the text in another order than it reads; what XML forbids besides is
 * U+FFFD, as in escapeHtml. Names refuse all of these on input; this is for text stored before.
 */
export function oneLine(value: string): string {
  return value
    .replace(/[\s\u0000-\u001F\u007F-\u009F]+/g, ' ')
    .replace(BIDI, '')
    .replace(NOT_XML, '\uFFFD')
    .trim();
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup this program wrote itself (a rendered SVG, a stylesheet): never user text. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
