/**
 * The media type a file is stored and served with: the one its upload declared when that is a
 * well-formed concrete type (RFC 9110 §8.3.1: type/subtype, then parameters, empty ones allowed), otherwise
 * application/octet-stream. A wildcard such as `*\/*` is a pattern for Accept, not a type. In
 * ASCII alone (RFC 9110 lets a quoted value hold obs-text): it goes back out as a header, which
 * takes nothing else (a byte beyond ASCII reads as Latin-1 on node:http and as UTF-8 on uWS).
 */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(
  `^(${TOKEN})/(${TOKEN})(?:[ \\t]*;(?:[ \\t]*${TOKEN}=(?:${TOKEN}|"(?:[\\t\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\t\\x20-\\x7E])*"))?)*$`,
);

const FALLBACK_MEDIA_TYPE = 'application/octet-stream';

export function storedMediaType(declared: string | undefined): string {
  const value = declared?.trim() ?? '';
  const match = value.length <= 200 ? MEDIA_TYPE.exec(value) : null;
  return match === null || match[1] === '*' || match[2] === '*' ? FALLBACK_MEDIA_TYPE : value;
}
