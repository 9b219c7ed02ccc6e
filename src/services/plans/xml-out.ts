/**
 * Writing XML: elements one a line, indented by tabs as MS Project saves them, text escaped, and
 * any character XML 1.0 cannot hold (U+FFFE, U+FFFF, a lone surrogate, a control character other
 * than tab and line breaks) written as U+FFFD so the document always parses.
 */

// Outside XML 1.0's Char production (the u flag reads a surrogate pair as one code point).
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function escapeXml(text: string): string {
  return text
    .replace(NOT_XML_CHAR, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** A leaf's value: text as is, a number in full, a boolean as MSPDI's 1 or 0. */
export type LeafValue = string | number | boolean;

export class XmlOut {
  private readonly parts: string[] = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'];
  private depth = 0;

  /** Opens an element (with a default namespace, for the root). */
  open(name: string, namespace?: string): this {
    const xmlns = namespace === undefined ? '' : ` xmlns="${escapeXml(namespace)}"`;
    this.parts.push(`${'\t'.repeat(this.depth++)}<${name}${xmlns}>\n`);
    return this;
  }

  close(name: string): this {
    this.parts.push(`${'\t'.repeat(--this.depth)}</${name}>\n`);
    return this;
  }

  /** A leaf element; none for a value that is null or undefined. */
  leaf(name: string, value: LeafValue | null | undefined): this {
    if (value === null || value === undefined) return this;
    const text = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
    this.parts.push(`${'\t'.repeat(this.depth)}<${name}>${escapeXml(text)}</${name}>\n`);
    return this;
  }

  text(): string {
    return this.parts.join('');
  }
}
