/**
 * Cursors and event ids as clients see them: opaque, and bound to the audience they were
 * given to. A log position counts every workspace's events, so handing it out would tell one
 * tenant of the others' activity; a position a reader was never given would stall its feed.
 * Each is one AES block (the server's key) of the position and a MAC over the position and
 * the audience (workspace; and person, for a person token): 22 base64url characters that
 * decode only for the audience they were given to. The same position gives the same text to
 * the same audience, so the feed and the streams agree, and across processes and restarts
 * (the key is kept in the database).
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { Db } from '../../storage/db.ts';
import { serverSecret } from '../../storage/event-log.store.ts';

/** Who a cursor is given to. */
export interface CursorAudience {
  workspaceId: string;
  /** A person token's person (their cursors cover flows shared with them too); null for keys and clients. */
  userId: string | null;
}

type Kind = 'cursor' | 'event';

const TEXT = /^[A-Za-z0-9_-]{22}$/;

export class CursorKeys {
  private constructor(
    private readonly cipherKey: Buffer,
    private readonly macKey: Buffer,
  ) {}

  /** The keys every process shares: made at first start, read from the database after. */
  static async load(sql: Db): Promise<CursorKeys> {
    const secret = await serverSecret(sql, 'event-cursors', randomBytes(32));
    const derive = (label: string) => createHmac('sha256', secret).update(label).digest();
    return new CursorKeys(derive('event-cursor-cipher'), derive('event-cursor-mac'));
  }

  for(audience: CursorAudience): CursorSeal {
    return new CursorSeal(this, `${audience.workspaceId}\n${audience.userId ?? ''}`);
  }

  seal(kind: Kind, value: string, audience: string): string {
    const block = Buffer.alloc(16);
    block.writeBigUInt64BE(BigInt(value), 0);
    this.mac(kind, value, audience).copy(block, 8);
    const cipher = createCipheriv('aes-256-ecb', this.cipherKey, null).setAutoPadding(false);
    return Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url');
  }

  open(kind: Kind, text: string, audience: string): string | null {
    if (!TEXT.test(text)) return null;
    const sealed = Buffer.from(text, 'base64url');
    // The 22nd character carries 2 bits and 4 unused ones: only the one spelling we hand out is
    // ours, so a cursor changed in those bits is refused rather than read as the same cursor.
    if (sealed.toString('base64url') !== text) return null;
    const decipher = createDecipheriv('aes-256-ecb', this.cipherKey, null).setAutoPadding(false);
    const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
    const value = block.readBigUInt64BE(0).toString();
    return timingSafeEqual(block.subarray(8), this.mac(kind, value, audience)) ? value : null;
  }

  private mac(kind: Kind, value: string, audience: string): Buffer {
    return createHmac('sha256', this.macKey)
      .update(`${kind}\n${audience}\n${value}`)
      .digest()
      .subarray(0, 8);
  }
}

/** Cursors and event ids of one audience. */
export class CursorSeal {
  constructor(
    private readonly keys: CursorKeys,
    readonly audience: string,
  ) {}

  cursor(position: string): string {
    return this.keys.seal('cursor', position, this.audience);
  }

  /** The position a cursor of this audience stands for; null for anything else (forged, another audience's, garbage). */
  position(cursor: string): string | null {
    return this.keys.open('cursor', cursor, this.audience);
  }

  eventId(id: string): string {
    return `evt_${this.keys.seal('event', id, this.audience)}`;
  }
}
