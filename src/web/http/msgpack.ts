/**
 * MessagePack for integrators who poll a lot: any JSON GET answers the same document as
 * MessagePack when `Accept` asks for `application/msgpack` or `application/vnd.msgpack` over
 * JSON. Plain MessagePack maps (msgpackr's record extension off), so any decoder reads it.
 * Each representation has its own entity tag (the JSON one with `.msgpack` inside the
 * quotes), and the encoded bytes are cached by that tag and the request, as the JSON bytes
 * are cached per version: a poller of an unchanged flow gets the same bytes without a second
 * encode. Errors stay JSON (the envelope of the spec).
 */
import { LRUCache } from 'lru-cache';
import { Packr } from 'msgpackr';

export const MSGPACK_TYPES = ['application/msgpack', 'application/vnd.msgpack'] as const;
const packr = new Packr({ useRecords: false, variableMapSize: true });
/** Encoded documents kept, by bytes. */
const CACHE_BYTES = 64 * 1024 * 1024;

/** The MessagePack type to answer with, when `Accept` prefers one to JSON; otherwise null (JSON). */
export function msgpackWanted(accept: string | undefined): string | null {
  if (!accept || !accept.includes('msgpack')) return null;
  let best: { type: string; q: number } | null = null;
  let json = 0;
  for (const part of accept.split(',')) {
    const [range, ...parameters] = part.trim().toLowerCase().split(';');
    const qParameter = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParameter ? Number(qParameter.slice(2)) : 1;
    if (!(q > 0)) continue;
    if ((MSGPACK_TYPES as readonly string[]).includes(range!.trim()) && (!best || q > best.q))
      best = { type: range!.trim(), q };
    if (range!.trim() === 'application/json') json = Math.max(json, q);
  }
  return best && best.q >= json ? best.type : null;
}

/** The MessagePack representation's tag, from the JSON one's. */
export function msgpackTag(jsonTag: string): string {
  return jsonTag.replace(/"$/, '.msgpack"');
}

export class MsgpackCache {
  private readonly cache = new LRUCache<string, Buffer>({
    maxSize: CACHE_BYTES,
    sizeCalculation: (value) => Math.max(1, value.length),
  });

  /** The document as MessagePack, encoded once per key (the request, its credential and the tag). */
  encode(key: string, json: string | Buffer): Buffer {
    let bytes = this.cache.get(key);
    if (!bytes) {
      bytes = packr.pack(JSON.parse(typeof json === 'string' ? json : json.toString('utf8')));
      if (bytes.length <= CACHE_BYTES / 8) this.cache.set(key, bytes);
    }
    return bytes;
  }
}
