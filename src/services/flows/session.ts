/**
 * The session actor of one hot flow. A mailbox serialises commands on the flow (two
 * concurrent completes of one task: one succeeds, the other sees the new state and is
 * refused); reads take the current immutable snapshot without queuing.
 *
 * A command validates against the current snapshot and returns the next state plus the
 * SQL that stores it. The next snapshot is derived before the transaction so the events
 * it implies (task.unblocked) commit atomically with the change; the session adopts the
 * new state only after commit. A version guard detects another process's write: the
 * session reloads and runs the command once more.
 */
import { DomainError, type ErrorCode, notFound } from '../../platform/errors.ts';
import { STATUS_BLOCKED, STATUS_READY } from '../../engine/status.ts';
import type { Sql, Tx } from '../../storage/db.ts';
import {
  announceFlowChange,
  bumpVersion,
  insertEvents,
  type DomainEvent,
} from '../../storage/flows.store.ts';
import type { FlowState } from './model.ts';
import type { FlowView, Snapshot } from './snapshot.ts';

export interface Plan<R> {
  /** The next state (with `nextFlow` applied), or null when the command changes nothing. */
  next: FlowState | null;
  write?: (tx: Tx) => Promise<void>;
  events?: DomainEvent[];
  result: (next: Snapshot, previous: Snapshot) => R | Promise<R>;
  /**
   * The next snapshot when the command derived it itself, step by step (a batch): its events
   * then already hold each step's task.unblocked.
   */
  derived?: Snapshot;
}

/** One change judged on the current snapshot: what a single route sends, and a batch's step. */
export type Decide<R> = (current: FlowView) => Plan<R>;

/**
 * Derives a next state from the snapshot before it (the session's own engine and pool).
 * `replaced`, when known: the only positions below previous's size whose records differ.
 */
export type Derive = (
  state: FlowState,
  previous: Snapshot,
  replaced?: readonly number[],
) => Promise<Snapshot>;

export type Command<R> = (current: Snapshot, derive: Derive) => Plan<R> | Promise<Plan<R>>;

export interface SessionDeps {
  sql: Sql;
  derive: Derive;
  /**
   * Fresh state from the database; null when the flow is gone. In a transaction, the flow's row
   * is locked first: no other process commits to the flow until it ends.
   */
  reload: (tx?: Tx) => Promise<Snapshot | null>;
  /** The committed version in the database (null: gone), to tell a stale refusal from a real one. */
  latestVersion: () => Promise<number | null>;
  /** Told after every commit, so views over many flows can refresh. */
  committed: (snapshot: Snapshot) => void;
}

class VersionConflict extends Error {}

/** Every conflict a command can raise: each depends on the flow's state, so a stale copy may raise it wrongly. */
const STATE_CONFLICTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'TASK_BLOCKED',
  'INVALID_TRANSITION',
  'TASK_STARTED',
  'SUBTASKS_OUTSTANDING',
  'DELIVERABLE_MISSING',
  'DOWNSTREAM_STARTED',
  'VERSION_MISMATCH',
]);

export class FlowSession {
  private tail: Promise<unknown> = Promise.resolve();
  /** The version this session is committing right now, if any. */
  private committing = 0;

  constructor(
    public snapshot: Snapshot,
    private readonly deps: SessionDeps,
  ) {}

  get version(): number {
    return this.snapshot.version;
  }

  /**
   * Whether an announced version is this session's own (held, or being committed): our
   * NOTIFY can arrive before our COMMIT returns, and must not evict the session.
   */
  owns(version: number): boolean {
    return version <= Math.max(this.snapshot.version, this.committing);
  }

  run<R>(command: Command<R>, actorId: string | null): Promise<R> {
    const result = this.tail.then(() => this.execute(command, actorId, false));
    this.tail = result.catch(() => undefined);
    return result;
  }

  private async execute<R>(
    command: Command<R>,
    actorId: string | null,
    retried: boolean,
  ): Promise<R> {
    const previous = this.snapshot;
    let plan: Plan<R>;
    try {
      plan = await command(previous, this.deps.derive);
    } catch (error) {
      // A refusal (a conflict with the state) must hold for the committed state, not for a
      // copy another process's commit has not reached yet (its NOTIFY may still be on the way).
      if (retried || !(error instanceof DomainError) || !STATE_CONFLICTS.has(error.code))
        throw error;
      const latest = await this.deps.latestVersion();
      if (latest === null || latest <= previous.version) throw error;
      const fresh = await this.deps.reload();
      if (!fresh) throw notFound('Flow');
      this.snapshot = fresh;
      return this.execute(command, actorId, true);
    }
    const state = plan.next;
    if (!state) return plan.result(previous, previous);
    const { next, events } = await this.settle(plan, state, previous);
    this.committing = state.flow.version;
    try {
      await this.deps.sql.begin((tx) => this.write(tx, plan, state, events, actorId));
    } catch (error) {
      this.committing = 0;
      if (!(error instanceof VersionConflict)) throw error;
      return this.executeLocked(command, actorId);
    }
    this.adopt(next);
    return plan.result(next, previous);
  }

  /**
   * Another process committed first: the command is decided again on the committed state while
   * this transaction holds the flow's row, so no other process can commit in between and this
   * try cannot lose (without the lock, two busy processes could each keep losing).
   */
  private async executeLocked<R>(command: Command<R>, actorId: string | null): Promise<R> {
    const settled = await this.deps.sql
      .begin(async (tx) => {
        const fresh = await this.deps.reload(tx);
        if (!fresh) throw notFound('Flow');
        this.snapshot = fresh;
        const plan = await command(fresh, this.deps.derive);
        if (!plan.next) return { plan, previous: fresh, next: fresh };
        const { next, events } = await this.settle(plan, plan.next, fresh);
        this.committing = plan.next.flow.version;
        await this.write(tx, plan, plan.next, events, actorId);
        return { plan, previous: fresh, next };
      })
      .catch((error: unknown) => {
        this.committing = 0;
        throw error;
      });
    if (settled.next !== settled.previous) this.adopt(settled.next);
    return settled.plan.result(settled.next, settled.previous);
  }

  /** The next snapshot and every event it commits with (task.unblocked included). */
  private async settle<R>(
    plan: Plan<R>,
    state: FlowState,
    previous: Snapshot,
  ): Promise<{ next: Snapshot; events: DomainEvent[] }> {
    if (plan.derived) return { next: plan.derived, events: plan.events ?? [] };
    const next = await this.deps.derive(state, previous);
    return { next, events: [...(plan.events ?? []), ...unblockedEvents(previous, next)] };
  }

  private async write<R>(
    tx: Tx,
    plan: Plan<R>,
    state: FlowState,
    events: DomainEvent[],
    actorId: string | null,
  ): Promise<void> {
    const { flow } = state;
    // One pipeline, not a round trip each: the guard is sent first, so it locks the flow row
    // before anything else runs (writers from other processes queue there), and when it finds
    // the version moved on, the conflict is what is reported (the rest is rolled back with it).
    const [bumped, ...rest] = await Promise.allSettled([
      bumpVersion(tx, flow),
      plan.write?.(tx),
      insertEvents(tx, flow.workspaceId, flow.id, actorId, events),
      announceFlowChange(tx, flow.workspaceId, flow.id, flow.version),
    ]);
    if (bumped.status === 'fulfilled' && !bumped.value) throw new VersionConflict();
    for (const settled of [bumped, ...rest])
      if (settled.status === 'rejected') throw settled.reason;
  }

  private adopt(next: Snapshot): void {
    this.snapshot = next;
    this.committing = 0;
    this.deps.committed(next);
    // After the reply is on its way: a later version's marks are made from these.
    setImmediate(() => next.settleMarks());
  }
}

/** Tasks that went from blocked to ready between two versions. */
export function unblockedIds(previous: Snapshot, next: Snapshot): string[] {
  const ids: string[] = [];
  // By position: neither version's list is built for this.
  for (let i = 0, n = next.size; i < n; i++) {
    if (next.status[i] !== STATUS_READY) continue;
    const id = next.at(i)?.id ?? '';
    // Mostly in the same place (only removals shift tasks): no lookup then.
    const before = previous.at(i)?.id === id ? i : previous.index.get(id);
    if (before !== undefined && previous.status[before] === STATUS_BLOCKED) ids.push(id);
  }
  return ids;
}

export function unblockedEvents(previous: Snapshot, next: Snapshot): DomainEvent[] {
  return taskUnblocked(next.flow.id, unblockedIds(previous, next));
}

/** task.unblocked for each of `ids`, in that order. */
export function taskUnblocked(flowId: string, ids: readonly string[]): DomainEvent[] {
  return ids.map((id) => ({ type: 'task.unblocked', data: { flowId, taskId: id } }));
}
