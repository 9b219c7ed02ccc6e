/**
 * One delivery attempt over HTTP(S): connects to the address the guard checked (never a
 * second DNS answer), follows no redirect, gives up after the timeout, and reads at most
 * RESPONSE_CAP bytes of the answer (the status decides; the rest is dropped unread).
 *
 * Connections are kept alive between attempts, in one agent per checked address: a pooled
 * connection therefore always leads to an address the guard passed, and a receiver taking
 * many deliveries is not made to accept a new connection (and TLS handshake) for each.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Target } from './address-guard.ts';

export const RESPONSE_CAP = 64 * 1024;

export interface AttemptOutcome {
  statusCode: number | null;
  durationMs: number;
  /** Why it did not count as delivered (or a note on a delivered one, e.g. an oversized answer). */
  error: string | null;
  /** Seconds the receiver asked to wait (Retry-After as seconds or an HTTP date), capped by the caller. */
  retryAfter: number | null;
  /** No complete answer within the timeout (what the circuit breaker counts). */
  timedOut?: boolean;
}

/** Idle pooled connections close before a typical server's own keep-alive timeout (5 s) does. */
const IDLE_MS = 4000;
/** Agents for this many distinct addresses at most; past it the oldest is closed. */
const MAX_AGENTS = 500;

export class Connections {
  /** Least recently used first out, its connections closed with it. */
  private readonly agents = new LRUCache<string, http.Agent>({
    max: MAX_AGENTS,
    dispose: (agent) => agent.destroy(),
  });

  agentFor(target: Target): http.Agent {
    const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const Agent = target.url.protocol === 'https:' ? https.Agent : http.Agent;
      agent = new Agent({ keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' });
      this.agents.set(key, agent);
    }
    return agent;
  }

  close(): void {
    this.agents.clear();
  }
}

export function post(
  target: Target,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  agent: http.Agent,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
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
      agent,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'flowplan-webhooks/1',
      },
    });
    const timer = setTimeout(() => {
      finish({
        statusCode: null,
        error: `no complete answer within ${timeoutMs / 1000} s`,
        retryAfter: null,
        timedOut: true,
      });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        statusCode: null,
        error: `connection failed: ${error.code ?? error.message}`,
        retryAfter: null,
      }),
    );
    request.on('response', (response) => {
      const code = response.statusCode ?? 0;
      const retryAfter = parseRetryAfter(response.headers['retry-after']);
      const location =
        response.headers.location && URL.parse(String(response.headers.location), target.url.href);
      // Only the redirect's host is kept: it may lead to the URL again, token and all, and the log is read beyond admins.
      let note: string | null =
        code >= 200 && code < 300
          ? null
          : code >= 300 && code < 400
            ? `redirect not followed (${code}${location ? ` to ${withoutPath(location)}` : ''})`
            : `answered ${code}`;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_CAP) {
          note = [note, `answer longer than ${RESPONSE_CAP} bytes, not read further`]
            .filter(Boolean)
            .join('; ');
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

/** A URL's scheme and host, with anything after them shown as `/…`: integrators put tokens in paths and queries. */
export function withoutPath(url: URL): string {
  return url.pathname === '/' && !url.search && !url.hash ? url.href : `${url.origin}/…`;
}

export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
