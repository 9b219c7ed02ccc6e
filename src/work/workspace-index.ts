/**
 * The workspace index behind the work views: the snapshots of every live flow of a
 * workspace, with their blocking counts, tagged by the set of flow versions. Polls of an
 * unchanged workspace reuse the index (and its rendered pages) without touching a flow or
 * the database; any commit in one of its flows, here or in another process, drops it, so
 * the next poll sees the write.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Histogram } from 'prom-client';
import { isoDate } from '../graph/calendar.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import type { Snapshot } from '../flows/snapshot.ts';
import type { Sql } from '../store/db.ts';
import { liveFlowIds } from '../store/flows.store.ts';

export interface IndexedFlow {
  readonly snapshot: Snapshot;
  readonly blocking: Uint32Array;
}

/** Rendered pages kept per index version; a poller repeats a handful of queries. */
const PAGES_PER_INDEX = 256;

export class WorkspaceIndex {
  private readonly pages = new Map<string, unknown>();

  constructor(
    readonly workspaceId: string,
    readonly flows: readonly IndexedFlow[],
    /** Changes whenever any live flow changes, or the day does (schedules move with today). */
    readonly tag: string,
    readonly today: string,
  ) {}

  /** A view computed once per index version and query. */
  memo<T>(key: string, compute: () => T): T {
    if (this.pages.has(key)) return this.pages.get(key) as T;
    const value = compute();
    if (this.pages.size < PAGES_PER_INDEX) this.pages.set(key, value);
    return value;
  }
}

export class WorkIndexes {
  private readonly indexes = new LRUCache<string, Promise<WorkspaceIndex>>({ max: 10_000 });

  constructor(
    private readonly sql: Sql,
    private readonly registry: SessionRegistry,
    /** Times each (re)build. */
    private readonly buildSeconds: Histogram | null = null,
    private readonly now: () => Date = () => new Date(),
  ) {
    registry.onChange((workspaceId) => this.indexes.delete(workspaceId));
    registry.onReset(() => this.indexes.clear());
  }

  private day = { today: '', from: 0, until: 0 };

  /** Today (UTC), formatted once a day rather than on every poll. */
  private today(): string {
    const now = this.now();
    const ms = now.getTime();
    if (ms < this.day.from || ms >= this.day.until) {
      const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      this.day = { today: isoDate(now), from, until: from + 86_400_000 };
    }
    return this.day.today;
  }

  async get(workspaceId: string): Promise<WorkspaceIndex> {
    const today = this.today();
    const cached = this.indexes.get(workspaceId);
    if (cached) {
      const index = await cached;
      if (index.today === today) return index;
    }
    const stop = this.buildSeconds?.startTimer();
    const building = this.build(workspaceId, today);
    if (stop) building.then(() => stop(), () => {});
    this.indexes.set(workspaceId, building);
    building.catch(() => this.indexes.get(workspaceId) === building && this.indexes.delete(workspaceId));
    return building;
  }

  private async build(workspaceId: string, today: string): Promise<WorkspaceIndex> {
    const ids = await liveFlowIds(this.sql, workspaceId);
    const snapshots = await Promise.all(ids.map((id) => this.registry.snapshot(workspaceId, id).catch(() => null)));
    const flows: IndexedFlow[] = [];
    const hash = createHash('sha1').update(`${workspaceId}|${today}`);
    for (const snapshot of snapshots) {
      // Archived between the query and the load, or gone: not live any more.
      if (!snapshot || snapshot.flow.archived) continue;
      flows.push({ snapshot, blocking: await snapshot.blocking() });
      hash.update(`|${snapshot.flow.id}:${snapshot.version}`);
    }
    return new WorkspaceIndex(workspaceId, flows, hash.digest('base64url'), today);
  }
}
