/**
 * An event stream as the hub keeps it: what was asked for, whose audience it is, where it has
 * got to in the log, and the transport it is sent on; and the events it is sent, encoded once
 * per audience and format however many streams receive them.
 */
import { Packr } from 'msgpackr';
import type { EventAudience, EventFilter, LoggedEvent } from '../../storage/event-log.store.ts';
import type { Principal } from '../auth/principal.ts';
import type { CursorSeal, Marks } from './cursor.ts';
import { feedEvent, reads, type FeedEvent } from './feed.ts';

/** Why the server closed a stream (the web layer says each to the client: web/schemas/asyncapi.ts). */
export type CloseReason = 'slow' | 'revoked' | 'stopping' | 'unavailable';
export type Transport = 'sse' | 'websocket';

const packr = new Packr({ useRecords: false, variableMapSize: true });

/**
 * One event as one audience sees it (its id and cursor are sealed for that audience), encoded
 * at most once per format whoever of that audience receives it.
 */
export class EncodedEvent {
  private jsonText: string | null = null;
  private packed: Buffer | null = null;

  constructor(readonly event: FeedEvent) {}

  json(): string {
    return (this.jsonText ??= JSON.stringify(this.event));
  }

  msgpack(): Buffer {
    return (this.packed ??= packr.pack(this.event));
  }
}

/**
 * One event of the log, encoded once per audience that receives it. Its cursor is a function
 * of the event for a workspace's audience; a person's cursor lists every workspace they read,
 * so it is the stream's own and the event is encoded for that stream alone.
 */
export class HubEvent {
  private readonly encoded = new Map<string, EncodedEvent>();

  constructor(readonly row: LoggedEvent) {}

  for(seal: CursorSeal, marks: Marks): EncodedEvent {
    if (seal.person) return new EncodedEvent(feedEvent(this.row, seal, marks));
    let encoded = this.encoded.get(seal.audience);
    if (!encoded)
      this.encoded.set(
        seal.audience,
        (encoded = new EncodedEvent(feedEvent(this.row, seal, marks))),
      );
    return encoded;
  }
}

/** A transport's side of a subscription (the web layer's SSE response or WebSocket). */
export interface StreamTarget {
  readonly transport: Transport;
  send(event: EncodedEvent): void;
  /** Bytes handed to the transport and not yet taken by the client's socket. */
  buffered(): number;
  heartbeat(): void;
  close(reason: CloseReason): void;
}

export interface StreamRequest {
  principal: Principal;
  /** The bearer as given, checked again while the stream is open. */
  authorization: string;
  filter: EventFilter;
  /** Resume after this cursor; null: from now. */
  after: string | null;
  /** Where the cursor came from, for the refusal of a bad one. */
  afterFrom: 'query' | 'header';
}

export class Subscription {
  target: StreamTarget | null = null;
  live = false;
  closed = false;
  /** When its credential was last found valid. */
  checkedAt = Date.now();
  /** The caps it counts against (its credential's, its person's) until it is removed. */
  holds: string[] = [];
  private drainWaiter: (() => void) | null = null;

  /**
   * `marks`: where it stands in the feed (the cursor of what it was sent last); `through`: the
   * drain position it has read the log through (null: not known yet, before its first read).
   */
  constructor(
    readonly request: StreamRequest,
    public audience: EventAudience,
    readonly seal: CursorSeal,
    public marks: Marks,
    public through: string | null,
  ) {}

  wants(e: HubEvent): boolean {
    return reads(this.audience, this.request.filter, e.row.workspaceId, e.row.flowId, e.row.type);
  }

  /** The transport took what was waiting (the web layer calls this on drain). */
  drained(): void {
    const wake = this.drainWaiter;
    this.drainWaiter = null;
    wake?.();
  }

  /** Resolves when the transport drains, or after `ms` (a drain may come between a look at the buffer and this). */
  waitForDrain(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.drainWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
