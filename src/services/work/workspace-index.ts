/**
 * The workspace index behind the work views: every live flow of a workspace, ranked on its
 * own (flow-ranks.ts), oldest flow first. Polls of an unchanged workspace reuse the index
 * (and its rendered pages) without touching a flow or the database. A commit in one flow,
 * here or in another process (registry.onChange), marks that flow; the next poll refreshes
 * only the marked flows, so a write costs one flow's ranking, never the workspace's.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Histogram } from 'prom-client';
import type { Metrics } from '../../platform/metrics.ts';
import { DomainError } from '../../platform/errors.ts';
import { isoDate } from '../../engine/calendar.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import type { Sql } from '../../storage/db.ts';
import { liveFlowIds } from '../../storage/flows.store.ts';
import { rankFlow, type RankedFlow } from './flow-ranks.ts';

/** Rendered pages kept per index version; a poller repeats a handful of queries. */
const PAGES_PER_INDEX = 256;

/** One version of a workspace's index: immutable, so a request sees one consistent state. */
export class WorkspaceIndex {
  private readonly pages = new Map<string, unknown>();

  constructor(
    readonly workspaceId: string,
    /** Live flows in index order (oldest first): a flow's place is its rank tie-break. */
    readonly flows: readonly RankedFlow[],
    readonly today: string,
  ) {}

  /** Changes whenever any live flow changes, or the day does (schedules move with today). */
  get tag(): string {
    return this.memo('tag', () => {
      const hash = createHash('sha1').update(`${this.workspaceId}|${this.today}`);
      for (const { snapshot } of this.flows)
        hash.update(`|${snapshot.flow.id}:${snapshot.version}`);
      return hash.digest('base64url');
    });
  }

  /** A view computed once per index version and query. */
  memo<T>(key: string, compute: () => T): T {
    if (this.pages.has(key)) return this.pages.get(key) as T;
    const value = compute();
    if (this.pages.size < PAGES_PER_INDEX) this.pages.set(key, value);
    return value;
  }
}

/** A workspace's newest index (or its build under way) and the flows changed since. */
interface Live {
  index: Promise<WorkspaceIndex> | null;
  /** The last index built without error, to fall back on when a refresh fails. */
  good: WorkspaceIndex | null;
  changed: Set<string>;
}

export class WorkIndexes {
  private readonly live = new LRUCache<string, Live>({ max: 10_000 });

  /** Indexes built whole (a workspace's first poll, or after LISTEN was restored or its entry was evicted), and flows ranked, since start. */
  rebuilds = 0;
  flowRanks = 0;

  constructor(
    private readonly sql: Sql,
    private readonly registry: SessionRegistry,
    private readonly now: () => Date = () => new Date(),
  ) {
    registry.onChange((workspaceId, flowId) => this.live.peek(workspaceId)?.changed.add(flowId));
    registry.onReset(() => this.live.clear());
  }

  /** Times each build or refresh, once metrics are registered. */
  private buildSeconds: Histogram | null = null;

  /** Its instruments: build time, read-when-scraped totals. */
  registerMetrics(metrics: Metrics): void {
    this.buildSeconds = metrics.histogram(
      'flowplan_work_index_build_seconds',
      'Work index builds and refreshes of a workspace and their time',
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    );
    metrics.total(
      'flowplan_work_index_rebuilds_total',
      "Work indexes built whole: a workspace's first poll, or after LISTEN was restored (a write refreshes one flow)",
      () => this.rebuilds,
    );
    metrics.total(
      'flowplan_work_index_flow_ranks_total',
      'Flows ranked for the work views: once per flow version a poll needed',
      () => this.flowRanks,
    );
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

  /**
   * The index as of this call: every change announced before it is in. Changes are taken
   * when a poll arrives and refreshed after the build under way, so refreshes apply in order.
   */
  async get(workspaceId: string): Promise<WorkspaceIndex> {
    const today = this.today();
    let live = this.live.get(workspaceId);
    if (!live) this.live.set(workspaceId, (live = { index: null, good: null, changed: new Set() }));
    if (!live.index) {
      this.rebuilds++;
      this.track(live, workspaceId, Promise.resolve(null), new Set(), today);
    } else if (live.changed.size > 0) {
      const changed = live.changed;
      live.changed = new Set();
      this.track(live, workspaceId, live.index, changed, today);
    }
    const pending = live.index!;
    const index = await pending;
    if (index.today === today) return index;
    // A new day moves no ranking, only the overview's schedule: same flows, new version.
    const moved = new WorkspaceIndex(workspaceId, index.flows, today);
    if (live.index === pending) ((live.good = moved), (live.index = Promise.resolve(moved)));
    return moved;
  }

  private track(
    live: Live,
    workspaceId: string,
    previous: Promise<WorkspaceIndex | null>,
    changed: Set<string>,
    today: string,
  ): void {
    const stop = this.buildSeconds?.startTimer();
    const building = previous.then((index) => this.refresh(workspaceId, index, changed, today));
    live.index = building;
    building.then(
      (index) => {
        stop?.();
        live.good = index;
      },
      () => {
        // Not applied: these flows are still to refresh, from the last good index.
        for (const flowId of changed) live.changed.add(flowId);
        if (live.index === building) live.index = live.good && Promise.resolve(live.good);
      },
    );
  }

  /** `previous` with the `changed` flows ranked again; no `previous`: the whole workspace. */
  private async refresh(
    workspaceId: string,
    previous: WorkspaceIndex | null,
    changed: ReadonlySet<string>,
    today: string,
  ): Promise<WorkspaceIndex> {
    const held = new Map(previous?.flows.map((flow) => [flow.snapshot.flow.id, flow]));
    // A flow not held (created, restored) needs its place among the live flows: ask for them.
    const ids =
      previous === null || [...changed].some((id) => !held.has(id))
        ? await liveFlowIds(this.sql, workspaceId)
        : [...held.keys()];
    const flows = await Promise.all(
      ids.map((id) =>
        changed.has(id) || !held.has(id) ? this.rank(workspaceId, id, held.get(id)) : held.get(id)!,
      ),
    );
    return new WorkspaceIndex(
      workspaceId,
      flows.filter((flow) => flow !== null),
      today,
    );
  }

  /** The flow's ranking at its current version; null once it is archived or gone. */
  private async rank(
    workspaceId: string,
    flowId: string,
    held: RankedFlow | undefined,
  ): Promise<RankedFlow | null> {
    const snapshot = await this.registry.snapshot(workspaceId, flowId).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
      throw error;
    });
    if (!snapshot || snapshot.flow.archived) return null;
    // Announced but not moved (a change heard twice): its ranking still holds.
    if (held?.snapshot.version === snapshot.version) return held;
    this.flowRanks++;
    return rankFlow(snapshot, await snapshot.blocking());
  }
}
