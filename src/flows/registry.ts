/**
 * The hot flow sessions of this process, bounded by FLOW_SESSIONS_MAX (least recently used
 * goes first; Postgres holds the truth, so an evicted flow just loads again). Concurrent
 * first reads of a cold flow share one load. A write committed by another process is
 * announced on FLOWS_CHANNEL and drops the stale session here.
 */
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.ts';
import type { Sql } from '../store/db.ts';
import { loadFlowState } from '../store/flows.store.ts';
import type { FlowState } from './model.ts';
import { FLOWS_CHANNEL, FlowSession } from './session.ts';
import { Snapshot, type Recompute } from './snapshot.ts';

export class SessionRegistry {
  private readonly sessions: LRUCache<string, FlowSession>;
  private readonly loading = new Map<string, Promise<FlowSession | null>>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly recompute: Recompute,
    private readonly publicUrlBase: string,
    max: number,
  ) {
    this.sessions = new LRUCache({ max });
  }

  get size(): number {
    return this.sessions.size;
  }

  async listen(): Promise<void> {
    const { unlisten } = await this.sql.listen(FLOWS_CHANNEL, (payload) => {
      const [flowId, version] = payload.split(':');
      const session = flowId ? this.sessions.peek(flowId) : undefined;
      if (session && session.version < Number(version)) this.sessions.delete(flowId!);
    });
    this.unlisten = unlisten;
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  derive(state: FlowState): Promise<Snapshot> {
    return Snapshot.derive(state, this.recompute, this.publicUrlBase);
  }

  /** The flow's session; 404 when it does not exist in this workspace. */
  async get(workspaceId: string, flowId: string): Promise<FlowSession> {
    const session = this.sessions.get(flowId) ?? (await this.load(workspaceId, flowId));
    if (!session || session.snapshot.flow.workspaceId !== workspaceId) throw new ApiError('NOT_FOUND', 'Flow not found');
    return session;
  }

  async snapshot(workspaceId: string, flowId: string): Promise<Snapshot> {
    return (await this.get(workspaceId, flowId)).snapshot;
  }

  /** Makes a just-created flow hot without reading it back. */
  adopt(snapshot: Snapshot): FlowSession {
    const session = this.newSession(snapshot);
    this.sessions.set(snapshot.flow.id, session);
    return session;
  }

  private newSession(snapshot: Snapshot): FlowSession {
    const { workspaceId, id } = snapshot.flow;
    return new FlowSession(snapshot, {
      sql: this.sql,
      derive: (state) => this.derive(state),
      reload: async () => {
        const state = await loadFlowState(this.sql, workspaceId, id);
        return state ? this.derive(state) : null;
      },
    });
  }

  private load(workspaceId: string, flowId: string): Promise<FlowSession | null> {
    const key = `${workspaceId}/${flowId}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = (async () => {
        const state = await loadFlowState(this.sql, workspaceId, flowId);
        if (!state) return null;
        const session = this.newSession(await this.derive(state));
        this.sessions.set(flowId, session);
        return session;
      })().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}
