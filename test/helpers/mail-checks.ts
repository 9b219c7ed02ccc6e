/**
 * What a mail client makes of a received message, beyond what mailparser shows. mailparser
 * joins quoted-printable soft line breaks, so a link split by one looks whole in its output;
 * `plainTextAsSent` reads the raw text/plain part and keeps every line break of the wire
 * (soft ones included), as a client that shows the raw text or finds links line by line does.
 */
import type { ReceivedMail } from './smtp.ts';

interface RawPart {
  headers: string;
  body: string;
}

/** The leaf parts of a raw MIME message (headers unfolded and lower-cased, body as sent). */
export function rawParts(raw: string): RawPart[] {
  const text = raw.replace(/\r\n/g, '\n');
  const boundaries = [...text.matchAll(/boundary="?([^";\n]+)"?/gi)].map((m) => m[1]!);
  let pieces = [text];
  for (const boundary of boundaries) {
    const marker = new RegExp(`^--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?$`, 'm');
    pieces = pieces.flatMap((piece) => piece.split(marker));
  }
  return pieces
    .map((piece) => {
      const split = piece.replace(/^\n/, '').indexOf('\n\n');
      const trimmed = piece.replace(/^\n/, '');
      return {
        headers: trimmed
          .slice(0, split)
          .replace(/\n[ \t]+/g, ' ')
          .toLowerCase(),
        body: trimmed.slice(split + 2),
      };
    })
    .filter(
      (part) =>
        /^content-type:/m.test(part.headers) && !/^content-type:\s*multipart\//m.test(part.headers),
    );
}

/** The text/plain part decoded line by line: a quoted-printable soft break stays a line break. */
export function plainTextAsSent(mail: ReceivedMail): string {
  const part = rawParts(mail.raw).find((p) => /^content-type:\s*text\/plain/m.test(p.headers));
  if (!part) throw new Error('no text/plain part');
  const encoding = /^content-transfer-encoding:\s*([\w-]+)/m.exec(part.headers)?.[1] ?? '7bit';
  if (encoding === 'base64')
    return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const escaped = part.body
      .replace(/%/g, '%25')
      .replace(/=\n/g, '\n')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => `%${hex}`);
    return decodeURIComponent(escaped);
  }
  return part.body;
}

/** The URLs a client's link detection finds in plain text: runs of non-space after http(s)://. */
export function textLinks(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s<>]+/g)].map((m) => m[0]);
}

/** Every `href` of the HTML part, unescaped. */
export function htmlLinks(markup: string): string[] {
  return [...markup.matchAll(/<a\b[^>]*\bhref="([^"]*)"/g)].map((m) =>
    m[1]!
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>'),
  );
}

/**
 * A basic email-client sanity check of an HTML part: what Gmail and Outlook drop or block
 * (style blocks, stylesheets, scripts, classes, external images and fonts) is absent; the
 * layout is presentation tables; every text element and link carries its style inline.
 * Returns the problems found (none: an empty list).
 */
export function emailHtmlProblems(markup: string): string[] {
  const problems: string[] = [];
  if (/<style\b/i.test(markup)) problems.push('a <style> block');
  if (/<link\b/i.test(markup)) problems.push('a <link> element');
  if (/<script\b/i.test(markup)) problems.push('a <script>');
  if (/\sclass=/i.test(markup)) problems.push('a class attribute (no stylesheet reaches it)');
  if (/\ssrc=|url\(|@import/i.test(markup)) problems.push('an external or embedded asset');
  if (!/<table\b[^>]*role="presentation"/i.test(markup))
    problems.push('no presentation table layout');
  for (const tag of markup.matchAll(/<(p|h1|h2|h3|ul|a|td)\b([^>]*)>/gi)) {
    if (!/\sstyle="[^"]+"/.test(tag[2]!)) problems.push(`<${tag[1]}> without an inline style`);
  }
  for (const href of htmlLinks(markup)) {
    if (!/^https?:\/\//.test(href)) problems.push(`a link that is not absolute: ${href}`);
  }
  if (!/^<!doctype html>/i.test(markup.trim())) problems.push('no doctype');
  return problems;
}
