/**
 * LISTEN that survives the database going away. postgres.js re-issues a process's LISTENs
 * once when their connection closes; if the database is still down at that moment the
 * listeners are dropped for good, and the process would never hear another process's
 * change again. So each process pings itself on a channel of its own every PING_MS; when
 * no ping has come back for a while although NOTIFY works again, every channel is listened
 * to anew. Notifications sent while a process was not listening are lost, so whoever
 * listens is told (`onRestored`) after every re-listen and drops what it cached.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './db.ts';

const PING_CHANNEL = 'flowplan_listen_ping';
const PING_MS = 1000;
/** Pings unanswered this long, with NOTIFY itself working, mean the LISTEN connection is gone. */
const LOST_MS = 3000;

interface Channel {
  fn: (payload: string) => void;
  onRestored: () => void;
  unlisten: (() => Promise<void>) | null;
}

class Listener {
  private readonly channels = new Map<string, Channel[]>();
  private readonly token = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private lastPong = Date.now();
  private restoring = false;
  private pinging = false;
  private starting: Promise<void> | null = null;
  private pingUnlisten: (() => Promise<void>) | null = null;

  constructor(private readonly sql: Sql) {}

  /** Every process pings on the one channel; only our own token counts. */
  private readonly onPing = (payload: string): void => {
    if (payload === this.token) this.lastPong = Date.now();
  };

  async listen(
    channel: string,
    fn: (payload: string) => void,
    onRestored: () => void,
  ): Promise<() => Promise<void>> {
    const entry: Channel = { fn, onRestored, unlisten: null };
    entry.unlisten = await this.subscribe(channel, entry);
    this.channels.set(channel, [...(this.channels.get(channel) ?? []), entry]);
    // Channels subscribed at once (start-up) share one start of the pings.
    if (!this.timer)
      await (this.starting ??= this.startPings().finally(() => {
        this.starting = null;
      }));
    return async () => {
      const left = (this.channels.get(channel) ?? []).filter((e) => e !== entry);
      if (left.length > 0) this.channels.set(channel, left);
      else this.channels.delete(channel);
      await entry.unlisten?.().catch(() => {});
      if (this.channels.size === 0) await this.stopPings();
    };
  }

  /** postgres.js calls `onlisten` after its own re-listen too: that is a restore as well. */
  private async subscribe(channel: string, entry: Channel): Promise<() => Promise<void>> {
    let first = true;
    const { unlisten } = await this.sql.listen(channel, entry.fn, () => {
      if (!first) entry.onRestored();
      first = false;
    });
    return unlisten;
  }

  private async startPings(): Promise<void> {
    this.lastPong = Date.now();
    ({ unlisten: this.pingUnlisten } = await this.sql.listen(PING_CHANNEL, this.onPing));
    this.timer = setInterval(() => void this.ping(), PING_MS);
    this.timer.unref();
  }

  private async stopPings(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pingUnlisten?.().catch(() => {});
    this.pingUnlisten = null;
  }

  private async ping(): Promise<void> {
    if (this.pinging) return;
    this.pinging = true;
    try {
      await this.sql.notify(PING_CHANNEL, this.token);
      if (Date.now() - this.lastPong > LOST_MS && !this.restoring) await this.restore();
    } catch {
      // The database is away: nothing can be judged yet; the clock starts again once NOTIFY works.
      this.lastPong = Date.now();
    } finally {
      this.pinging = false;
    }
  }

  /** Listens to every channel anew (dropping whatever postgres.js may still hold), then tells each listener. */
  private async restore(): Promise<void> {
    this.restoring = true;
    try {
      await this.pingUnlisten?.().catch(() => {});
      ({ unlisten: this.pingUnlisten } = await this.sql.listen(PING_CHANNEL, this.onPing));
      for (const [channel, entries] of this.channels) {
        for (const entry of entries) {
          await entry.unlisten?.().catch(() => {});
          entry.unlisten = await this.subscribe(channel, entry);
        }
      }
      this.lastPong = Date.now();
      for (const entries of this.channels.values()) for (const entry of entries) entry.onRestored();
    } catch {
      // Still away: the next ping tries again.
    } finally {
      this.restoring = false;
    }
  }
}

const listeners = new WeakMap<Sql, Listener>();

/**
 * Listens to `channel` for as long as the process runs, through database restarts;
 * `onRestored` runs after each re-listen (notifications may have been missed meanwhile).
 * Returns the unlisten.
 */
export function listenDurably(
  sql: Sql,
  channel: string,
  fn: (payload: string) => void,
  onRestored: () => void,
): Promise<() => Promise<void>> {
  let listener = listeners.get(sql);
  if (!listener) listeners.set(sql, (listener = new Listener(sql)));
  return listener.listen(channel, fn, onRestored);
}
