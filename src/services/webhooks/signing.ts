/**
 * Standard Webhooks 1.0 signing: `whsec_` + base64 of 32 random bytes is the secret; the
 * HMAC-SHA256 key is its decoded bytes; the signed content is `id.timestamp.body`; the
 * `webhook-signature` header lists `v1,<base64>` per valid secret, space-separated (both
 * the new and the previous secret while a rotation overlaps).
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return (
    'v1,' + createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
  );
}

/** The three Standard Webhooks headers of one attempt. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}
