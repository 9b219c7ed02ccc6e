/**
 * One delivery attempt over HTTP(S): connects to the address the guard checked (never a
 * second DNS answer), follows no redirect, gives up after the timeout, and reads at most
 * RESPONSE_CAP bytes of the answer (the status decides; the rest is dropped unread).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Target } from './address-guard.ts';

export const RESPONSE_CAP = 64 * 1024;

export interface AttemptOutcome {
  statusCode: number | null;
  durationMs: number;
  /** Why it did not count as delivered (or a note on a delivered one, e.g. an oversized answer). */
  error: string | null;
  /** Seconds the receiver asked to wait (Retry-After as seconds or an HTTP date), capped by the caller. */
  retryAfter: number | null;
}

export function post(target: Target, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptOutcome> {
  const started = performance.now();
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<AttemptOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
    };
    const request = client.request(target.url, {
      method: 'POST',
      lookup: pinned,
      agent: false,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'flowplan-webhooks/1',
      },
    });
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no complete answer within ${timeoutMs / 1000} s`, retryAfter: null });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => finish({ statusCode: null, error: `connection failed: ${error.code ?? error.message}`, retryAfter: null }));
    request.on('response', (response) => {
      const code = response.statusCode ?? 0;
      const retryAfter = parseRetryAfter(response.headers['retry-after']);
      let note: string | null = code >= 200 && code < 300 ? null : code >= 300 && code < 400
        ? `redirect not followed (${code}${response.headers.location ? ` to ${String(response.headers.location).slice(0, 200)}` : ''})`
        : `answered ${code}`;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_CAP) {
          note = [note, `answer longer than ${RESPONSE_CAP} bytes, not read further`].filter(Boolean).join('; ');
          finish({ statusCode: code, error: note, retryAfter });
          response.destroy();
        }
      });
      response.on('end', () => finish({ statusCode: code, error: note, retryAfter }));
      response.on('error', () => finish({ statusCode: code, error: note, retryAfter }));
      response.on('close', () => finish({ statusCode: code, error: note, retryAfter }));
    });
    request.end(body);
  });
}

export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
