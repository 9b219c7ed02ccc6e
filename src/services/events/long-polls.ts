/**
 * The long polls of `GET /v1/events` waiting on this process, kept by workspace: an event wakes
 * only the polls whose audience and filter read it, so other workspaces' events wake no one
 * and every poll woken finds something when it reads the log again. The hub tells them of
 * each event it dispatches.
 */
import { Counter } from 'prom-client';
import type { Foreground } from '../../platform/foreground.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { EventAudience, EventFilter, LoggedEvent } from '../../storage/event-log.store.ts';
import { reads } from './feed.ts';

/** A long poll waiting for an event it may read after `position`. */
interface Waiter {
  position: bigint;
  audience: EventAudience;
  filter: EventFilter;
  resolve: () => void;
  timer: NodeJS.Timeout;
}

export class LongPolls {
  /** By their workspace; those that also read flows shared from other workspaces are in `guests` too. */
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly guests = new Set<Waiter>();
  private readonly wakes: Counter;

  constructor(
    metrics: Metrics,
    /** The API's load: a long poll that waits is not work, so it steps out of it while it waits (webhooks read it). */
    private readonly foreground: Foreground | null,
  ) {
    metrics.gauge(
      'flowplan_event_waiters',
      'Long polls of GET /v1/events waiting on this process',
      () => {
        let n = 0;
        for (const set of this.waiters.values()) n += set.size;
        return n;
      },
    );
    this.wakes = new Counter({
      name: 'flowplan_event_waiter_wakes_total',
      help: 'Long polls woken by an event they may read (each then reads the log)',
      registers: [metrics.registry],
    });
  }

  /** Resolves on an event after `position` that this audience and filter read, or after `ms`. */
  wait(position: string, ms: number, audience: EventAudience, filter: EventFilter): Promise<void> {
    this.foreground?.leave();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        position: BigInt(position),
        audience,
        filter,
        resolve,
        timer: setTimeout(() => this.release(waiter), ms),
      };
      let set = this.waiters.get(audience.workspaceId);
      if (!set) this.waiters.set(audience.workspaceId, (set = new Set()));
      set.add(waiter);
      if (audience.sharedFlowIds.length > 0) this.guests.add(waiter);
    }).finally(() => this.foreground?.enter());
  }

  /** Wakes the polls that read this event. */
  wake(row: LoggedEvent): void {
    const position = BigInt(row.position);
    const wake = (w: Waiter) => {
      if (
        w.position >= position ||
        !reads(w.audience, w.filter, row.workspaceId, row.flowId, row.type)
      )
        return;
      this.wakes.inc();
      this.release(w);
    };
    for (const w of this.waiters.get(row.workspaceId) ?? []) wake(w);
    for (const w of this.guests) if (w.audience.workspaceId !== row.workspaceId) wake(w);
  }

  /** Ends every wait (the process is stopping). */
  wakeAll(): void {
    for (const set of [...this.waiters.values()]) for (const w of set) this.release(w);
  }

  private release(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const set = this.waiters.get(waiter.audience.workspaceId);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(waiter.audience.workspaceId);
    this.guests.delete(waiter);
    waiter.resolve();
  }
}
