/**
 * The hot flow sessions of this process, bounded by FLOW_SESSIONS_MAX (least recently used
 * goes first; Postgres holds the truth, so an evicted flow just loads again). Concurrent
 * first reads of a cold flow share one load. A write committed by another process is
 * announced on FLOWS_CHANNEL and drops the stale session here.
 */
import { LRUCache } from 'lru-cache';
import { notFound } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Sql } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import {
  FLOWS_CHANNEL,
  flowVersion,
  loadFlowState,
  lockFlow,
  parseFlowChange,
} from '../../storage/flows.store.ts';
import type { FlowState } from './model.ts';
import { FlowSession } from './session.ts';
import { flowJsonStats } from './flow-body.ts';
import { Snapshot, type Recompute } from './snapshot.ts';

/** Heap per task of a hot session loaded from Postgres, measured by bench:flow-ops (8.6 MB for 10,000 tasks, 83 MB for 100,000). */
const SESSION_BYTES_PER_TASK = 850;

export class SessionRegistry {
  private readonly sessions: LRUCache<string, FlowSession>;
  private readonly loading = new Map<string, Promise<FlowSession | null>>();
  /** Versions announced by other processes while a load of that flow was under way. */
  private readonly announcedDuringLoad = new Map<string, number>();
  private unlisten: (() => Promise<void>) | null = null;
  private readonly listeners: ((workspaceId: string, flowId: string) => void)[] = [];
  private readonly resetListeners: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly recompute: Recompute,
    private readonly publicUrlBase: string,
    max: number,
  ) {
    this.sessions = new LRUCache({
      max,
      dispose: (_session, _flowId, reason) => {
        if (reason === 'evict') this.evictions++;
      },
    });
  }

  /** Its instruments, read when scraped. */
  registerMetrics(metrics: Metrics): void {
    metrics.gauge('flowplan_flow_sessions', 'Hot flow sessions held in memory', () => this.size);
    metrics.gauge(
      'flowplan_flow_session_tasks',
      'Tasks held in hot flow sessions (what their memory grows with)',
      () => this.tasksHeld(),
    );
    metrics.gauge(
      'flowplan_flow_session_heap_bytes_estimate',
      'Heap the hot sessions hold, estimated from their tasks (bench:flow-ops measured 8.6 MB for one 10k-task session: about 0.85 KB a task)',
      () => this.tasksHeld() * SESSION_BYTES_PER_TASK,
    );
    metrics.total(
      'flowplan_flow_session_loads_total',
      'Flows loaded from Postgres into a session',
      () => this.loads,
    );
    metrics.total(
      'flowplan_flow_json_task_bytes_total',
      'Bytes of task JSON serialized for Flow bodies (a task whose fields did not change reuses its bytes from the version before)',
      () => flowJsonStats.taskBytes,
    );
    metrics.total(
      'flowplan_flow_session_evictions_total',
      'Hot sessions dropped to stay within FLOW_SESSIONS_MAX',
      () => this.evictions,
    );
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Flows loaded from Postgres, and sessions evicted to stay within the bound, since start. */
  loads = 0;
  evictions = 0;

  /** Tasks held in hot sessions: what their memory grows with. */
  tasksHeld(): number {
    let tasks = 0;
    // By size: reading a layered state's list (model.ts LayeredState) would build it.
    for (const session of this.sessions.values()) tasks += session.snapshot.size;
    return tasks;
  }

  async listen(): Promise<void> {
    this.unlisten = await listenDurably(
      this.sql,
      FLOWS_CHANNEL,
      (payload) => {
        const change = parseFlowChange(payload);
        if (!change) return;
        if (this.loading.has(`${change.workspaceId}/${change.flowId}`)) {
          this.announcedDuringLoad.set(
            change.flowId,
            Math.max(change.version, this.announcedDuringLoad.get(change.flowId) ?? 0),
          );
        }
        const session = this.sessions.peek(change.flowId);
        // Our own commits were announced locally already; only another process's are news.
        if (session?.owns(change.version)) return;
        if (session) this.sessions.delete(change.flowId);
        this.changed(change.workspaceId, change.flowId);
      },
      () => this.reset(),
    );
  }

  /** After LISTEN was lost and restored: changes may have gone unheard, so nothing cached is trusted. */
  private reset(): void {
    this.sessions.clear();
    for (const listener of this.resetListeners) listener();
  }

  /** Calls `listener` when every flow may have changed unannounced (LISTEN was restored after an outage). */
  onReset(listener: () => void): void {
    this.resetListeners.push(listener);
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  /** Calls `listener` whenever a flow of a workspace changes, here or in another process. */
  onChange(listener: (workspaceId: string, flowId: string) => void): void {
    this.listeners.push(listener);
  }

  private changed(workspaceId: string, flowId: string): void {
    for (const listener of this.listeners) listener(workspaceId, flowId);
  }

  /**
   * `previous`: the flow's snapshot before this change, whose serialized tasks may be reused;
   * `replaced`: see Derive.
   */
  derive(
    state: FlowState,
    previous: Snapshot | null = null,
    replaced?: readonly number[],
  ): Promise<Snapshot> {
    return Snapshot.derive(state, this.recompute, this.publicUrlBase, previous, replaced);
  }

  /** The flow's session; 404 when it does not exist in this workspace. */
  async get(workspaceId: string, flowId: string): Promise<FlowSession> {
    const session = this.sessions.get(flowId) ?? (await this.load(workspaceId, flowId));
    if (!session || session.snapshot.flow.workspaceId !== workspaceId) throw notFound('Flow');
    return session;
  }

  async snapshot(workspaceId: string, flowId: string): Promise<Snapshot> {
    return (await this.get(workspaceId, flowId)).snapshot;
  }

  /**
   * The flow's snapshot at `version` or later when Postgres has that version: a client may have
   * read it from another process whose announcement has not reached this one yet.
   */
  async snapshotAtLeast(workspaceId: string, flowId: string, version: number): Promise<Snapshot> {
    const held = await this.snapshot(workspaceId, flowId);
    if (
      held.version >= version ||
      ((await flowVersion(this.sql, workspaceId, flowId)) ?? 0) < version
    )
      return held;
    this.sessions.delete(flowId);
    return this.snapshot(workspaceId, flowId);
  }

  /** Makes a just-created flow hot without reading it back. */
  adopt(snapshot: Snapshot): FlowSession {
    const session = this.newSession(snapshot);
    this.sessions.set(snapshot.flow.id, session);
    this.changed(snapshot.flow.workspaceId, snapshot.flow.id);
    return session;
  }

  private newSession(snapshot: Snapshot): FlowSession {
    const { workspaceId, id } = snapshot.flow;
    return new FlowSession(snapshot, {
      sql: this.sql,
      derive: (state, previous, replaced) => this.derive(state, previous, replaced),
      reload: async (tx) => {
        if (tx) await lockFlow(tx, workspaceId, id);
        const state = await loadFlowState(tx ?? this.sql, workspaceId, id);
        return state ? this.derive(state) : null;
      },
      latestVersion: () => flowVersion(this.sql, workspaceId, id),
      committed: () => this.changed(workspaceId, id),
    });
  }

  private load(workspaceId: string, flowId: string): Promise<FlowSession | null> {
    const key = `${workspaceId}/${flowId}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = (async () => {
        let snapshot: Snapshot | null = null;
        // A write announced while we read may be newer than what we read: read again.
        do {
          const state = await loadFlowState(this.sql, workspaceId, flowId);
          this.loads++;
          snapshot = state ? await this.derive(state) : null;
        } while (snapshot && snapshot.version < (this.announcedDuringLoad.get(flowId) ?? 0));
        this.announcedDuringLoad.delete(flowId);
        if (!snapshot) return null;
        const session = this.newSession(snapshot);
        this.sessions.set(flowId, session);
        return session;
      })().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}
