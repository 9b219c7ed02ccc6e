/**
 * Server-rendered markup (public views, the web app, emails, SVG diagrams): a tagged
 * template that escapes every interpolated value, so a name like `"><img onerror=…>` or
 * `</svg>` is always text. Only `Html` values (built by `html` or `trusted`) pass unescaped.
 */

export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

/** Text made safe for element content and quoted attribute values, in HTML and SVG alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

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
