/**
 * The HTML frame of every email flowplan sends. Mail clients ignore or strip `<style>`
 * blocks, stylesheets and external images (Gmail, Outlook), and Outlook lays out only
 * tables reliably, so the frame is nested presentation tables with every style inline and
 * nothing fetched from elsewhere. Callers build their body from the styled pieces below.
 */
import { html, oneLine, type Html, type HtmlValue } from '../../platform/html.ts';

const FONT = 'font-family: Arial, Helvetica, sans-serif';
const TEXT = `${FONT}; font-size: 16px; line-height: 24px; color: #1a1a1a`;

export const mailStyle = {
  p: 'margin: 0 0 16px 0',
  h2: `margin: 24px 0 8px 0; ${FONT}; font-size: 18px; line-height: 24px; color: #1a1a1a`,
  ul: 'margin: 0 0 16px 0; padding: 0 0 0 24px',
  li: 'margin: 0 0 4px 0',
  link: 'color: #1f5fbf; text-decoration: underline',
  button: `display: inline-block; padding: 12px 20px; background-color: #1f5fbf; color: #ffffff; ${FONT}; font-size: 16px; font-weight: bold; text-decoration: none; border-radius: 4px`,
  /** A URL shown as text: it may wrap anywhere on a narrow screen rather than widen the mail. */
  url: `${FONT}; font-size: 14px; color: #1f5fbf; word-break: break-all`,
} as const;

export function mailLink(href: string, text: HtmlValue): Html {
  return html`<a href="${href}" style="${mailStyle.link}">${text}</a>`;
}

export function mailDocument(input: { title: string; body: Html; footer: Html }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${oneLine(input.title)}</title></head>
<body style="margin: 0; padding: 0; background-color: #f4f5f7">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color: #f4f5f7">
<tr><td align="center" style="padding: 24px 12px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="width: 100%; max-width: 600px; background-color: #ffffff; border: 1px solid #dde1e6">
<tr><td style="padding: 16px 24px; ${FONT}; font-size: 18px; font-weight: bold; color: #1a1a1a; border-bottom: 1px solid #dde1e6">flowplan</td></tr>
<tr><td style="padding: 24px; ${TEXT}">
${input.body}
</td></tr>
<tr><td style="padding: 16px 24px; ${FONT}; font-size: 13px; line-height: 20px; color: #555555; border-top: 1px solid #dde1e6">
${input.footer}
</td></tr>
</table>
</td></tr>
</table>
</body></html>`.text;
}
