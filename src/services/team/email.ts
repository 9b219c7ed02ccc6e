/**
 * The address check behind 400 INVALID_EMAIL. The JSON schema only bounds the length, so
 * a malformed address is answered with the spec's code rather than VALIDATION_FAILED.
 *
 * Accepted: an RFC 5322 dot-atom local part (no quoted strings, no comments) of at most 64
 * characters, `@`, and a DNS name of at least two labels whose last label is alphabetic or
 * punycode. ASCII only, so that every stored address is also a JSON-schema `email`.
 */
import { DomainError } from '../../platform/errors.ts';

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LOCAL = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TOP_LABEL = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

export function isEmail(address: string): boolean {
  if (address.length > 254) return false;
  const at = address.lastIndexOf('@');
  if (at < 1 || address.indexOf('@') !== at) return false;
  const local = address.slice(0, at);
  const labels = address.slice(at + 1).split('.');
  return (
    local.length <= 64 &&
    LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    TOP_LABEL.test(labels.at(-1)!)
  );
}

/** The address with surrounding white space removed; 400 INVALID_EMAIL when it is not one. */
export function emailAddress(input: string): string {
  const address = input.trim();
  if (!isEmail(address))
    throw new DomainError('INVALID_EMAIL', `"${input.slice(0, 64)}" is not a valid email address`);
  return address;
}
