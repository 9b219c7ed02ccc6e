/**
 * Cursors and event ids as clients see them: opaque, and bound to the audience they were
 * given to. A cursor holds feed positions (`seq`), numbered per workspace: for a key or a
 * client, its workspace's; for a person, one per workspace they read (their own, and those
 * sharing flows with them), since positions of different workspaces do not compare.
 *
 * A workspace's cursor is one AES block (the server's key) of the position and a MAC over the
 * position and the audience: 22 base64url characters. A person's is the positions' text under
 * AES-CTR with a synthetic IV, the MAC of text and audience (deterministic authenticated
 * encryption, as AES-SIV): longer, as many workspaces as they read. Either decodes only for
 * the audience it was given to, and the same positions give the same text to the same
 * audience, so the feed and the streams agree, across processes and restarts (the key is kept
 * in the database).
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import type { Db } from '../../storage/db.ts';
import { serverSecret, type Marks } from '../../storage/event-log.store.ts';

export type { Marks };

/** Who a cursor is given to. */
export interface CursorAudience {
  workspaceId: string;
  /** A person token's person (their cursors cover flows shared with them too); null for keys and clients. */
  userId: string | null;
}

/** `delivery`: a webhook delivery's id, sealed for its endpoint (src/services/webhooks/message.ts). */
type Kind = 'cursor' | 'event' | 'delivery';

const TEXT = /^[A-Za-z0-9_-]{22}$/;
const MARKS_TEXT = /^[A-Za-z0-9_-]{23,}$/;

/** `marks` moved on past one event (of `workspaceId`, numbered `seq`). */
export function advance(
  marks: Marks,
  ownWorkspaceId: string,
  workspaceId: string,
  seq: string,
): Marks {
  if (workspaceId === ownWorkspaceId) return { ...marks, own: seq };
  return { ...marks, others: new Map(marks.others).set(workspaceId, seq) };
}

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
    return new CursorSeal(this, `${audience.workspaceId}\n${audience.userId ?? ''}`, audience);
  }

  /** A person's marks, sealed: the text `own` then a line `workspace seq` per other workspace, in order. */
  sealMarks(marks: Marks, audience: string): string {
    const lines = [...marks.others].sort(([a], [b]) => (a < b ? -1 : 1));
    const text = Buffer.from([marks.own, ...lines.map(([w, seq]) => `${w} ${seq}`)].join('\n'));
    const iv = this.mac('marks', text.toString(), audience, 16);
    const cipher = createCipheriv('aes-256-ctr', this.cipherKey, iv);
    return Buffer.concat([iv, cipher.update(text), cipher.final()]).toString('base64url');
  }

  openMarks(sealed: string, audience: string): Marks | null {
    if (!MARKS_TEXT.test(sealed)) return null;
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.toString('base64url') !== sealed || bytes.length < 17) return null;
    const iv = bytes.subarray(0, 16);
    const decipher = createDecipheriv('aes-256-ctr', this.cipherKey, iv);
    const text = Buffer.concat([decipher.update(bytes.subarray(16)), decipher.final()]).toString();
    if (!timingSafeEqual(iv, this.mac('marks', text, audience, 16))) return null;
    const [own = '', ...lines] = text.split('\n');
    const others = new Map<string, string>();
    for (const line of lines) {
      const space = line.indexOf(' ');
      others.set(line.slice(0, space), line.slice(space + 1));
    }
    return { own, others, from: '0' };
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

  private mac(kind: Kind | 'marks', value: string, audience: string, bytes = 8): Buffer {
    return createHmac('sha256', this.macKey)
      .update(`${kind}\n${audience}\n${value}`)
      .digest()
      .subarray(0, bytes);
  }
}

/** Cursors and event ids of one audience. */
export class CursorSeal {
  constructor(
    private readonly keys: CursorKeys,
    readonly audience: string,
    private readonly who: CursorAudience,
  ) {}

  /** A person's cursors list every workspace they read; a key's or a client's is its workspace's position. */
  get person(): boolean {
    return this.who.userId !== null;
  }

  cursor(marks: Marks): string {
    return this.person
      ? this.keys.sealMarks(marks, this.audience)
      : this.keys.seal('cursor', marks.own, this.audience);
  }

  /** Where a cursor of this audience stands; null for anything else (forged, another audience's, garbage). */
  marks(cursor: string): Marks | null {
    if (cursor.length !== 22)
      return this.person ? this.keys.openMarks(cursor, this.audience) : null;
    const position = this.keys.open('cursor', cursor, this.audience);
    return position === null ? null : { own: position, others: new Map(), from: position };
  }

  eventId(id: string): string {
    return `evt_${this.keys.seal('event', id, this.audience)}`;
  }
}
