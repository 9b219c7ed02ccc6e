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
import Negotiator from 'negotiator';

export const MSGPACK_TYPES = ['application/msgpack', 'application/vnd.msgpack'] as const;
const packr = new Packr({ useRecords: false, variableMapSize: true });
/** Encoded documents kept, by bytes. */
const CACHE_BYTES = 64 * 1024 * 1024;

/** JSON first: a tie the client's own order does not break stays JSON. */
const OFFERED = ['application/json', ...MSGPACK_TYPES];

/** The MessagePack type to answer with, when `Accept` prefers one to JSON; otherwise null (JSON). */
export function msgpackWanted(accept: string | undefined): string | null {
  // Nearly every request names no MessagePack type, and then none can be chosen: no need to parse.
  if (!accept?.includes('msgpack')) return null;
  const type = new Negotiator({ headers: { accept } }).mediaType(OFFERED);
  return type === undefined || type === OFFERED[0] ? null : type;
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
