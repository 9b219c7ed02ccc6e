/**
 * The stored facts of one flow, held immutably by its session: a command builds the next
 * state by structural sharing (a new tasks array, new records only for what changed), so
 * a failed transaction leaves the current state untouched and readers never see a half.
 */
import { validationFailed } from '../../platform/errors.ts';
import type {
  EstimateRange,
  FlowRecord,
  FlowState,
  TaskRecord,
} from '../../storage/flows.store.ts';

export { PROGRESS, type Progress } from '../../engine/status.ts';
export type {
  Deliverable,
  EstimateRange,
  FlowRecord,
  FlowState,
  TaskRecord,
} from '../../storage/flows.store.ts';

/**
 * A task's range as its estimate allows it (CONTRACT §5: 0 ≤ low ≤ estimateHours ≤ high), or
 * VALIDATION_FAILED at `pointer` (the request's place of the range, or of the estimate when
 * only the estimate changed).
 */
export function checkedRange(
  estimateHours: number | null,
  range: EstimateRange | null,
  pointer: string,
): EstimateRange | null {
  if (range === null) return null;
  const problem =
    estimateHours === null
      ? 'needs estimateHours: a range is around an estimate'
      : range.low > estimateHours || estimateHours > range.high
        ? `must hold estimateHours (${estimateHours}) between low and high`
        : null;
  if (problem) throw validationFailed([{ in: 'body', pointer, message: problem }]);
  return { low: range.low, high: range.high };
}

/** The flow record of the next version: every command that changes a flow goes through here. */
export function nextFlow(
  flow: FlowRecord,
  patch: Partial<
    Pick<FlowRecord, 'name' | 'description' | 'dueDate' | 'archived' | 'publicToken'>
  > = {},
): FlowRecord {
  return { ...flow, ...patch, version: flow.version + 1, updatedAt: new Date().toISOString() };
}

/** A version's tasks by position, read without building its list. */
export interface TaskPositions {
  readonly size: number;
  at(position: number): TaskRecord | undefined;
}

export function positionsOf(tasks: readonly TaskRecord[]): TaskPositions {
  return { size: tasks.length, at: (position) => tasks[position] };
}

/** A state that reads its tasks by position without building its list (a draft's: draft.ts DraftState). */
export type PositionedState = FlowState & TaskPositions;

export function isPositioned(state: FlowState): state is PositionedState {
  return typeof (state as Partial<TaskPositions>).at === 'function';
}

/** A state's tasks by position: its own reader when it has one, else its list. */
export function positionedTasks(state: FlowState): TaskPositions {
  return isPositioned(state) ? state : positionsOf(state.tasks);
}

/** What a command does to a flow's tasks: some replaced, some removed, some added (in that order). */
export interface TaskChanges {
  replace?: readonly TaskRecord[];
  remove?: ReadonlySet<string>;
  add?: readonly TaskRecord[];
}

/**
 * The next state with `changes` applied. With the state's `index` (task id → position), a
 * change that removes nothing copies the list and sets the replaced places: no lookup per task
 * of a large flow.
 */
export function withTasks(
  state: FlowState,
  changes: TaskChanges,
  index?: ReadonlyMap<string, number>,
): TaskRecord[] {
  if (index && !changes.remove?.size) {
    // Made at its length at once: pushed onto a copy, a large flow's list was copied twice.
    const next = state.tasks.concat(changes.add ?? []);
    for (const task of changes.replace ?? []) next[index.get(task.id)!] = task;
    return next;
  }
  const replaced = new Map((changes.replace ?? []).map((task) => [task.id, task]));
  const next: TaskRecord[] = [];
  for (const task of state.tasks) {
    if (changes.remove?.has(task.id)) continue;
    next.push(replaced.get(task.id) ?? task);
  }
  next.push(...(changes.add ?? []));
  return next;
}

/**
 * A state's `tasks` as an own, enumerable field (spread or cloned, the state carries its list),
 * built by `build` when first read and a plain value from then on: a getter read in a loop over
 * a large flow (an accessor among states of several shapes) cost milliseconds.
 */
export function tasksOnRead(state: FlowState, build: () => readonly TaskRecord[]): void {
  Object.defineProperty(state, 'tasks', {
    enumerable: true,
    configurable: true,
    get: () => {
      const tasks = build();
      Object.defineProperty(state, 'tasks', { value: tasks, enumerable: true });
      return tasks;
    },
  });
}

/** A state and its index, which a command's next state is built from. */
interface Before {
  readonly state: FlowState;
  readonly flow: FlowRecord;
  readonly index: ReadonlyMap<string, number>;
}

/**
 * A command's next state, at the flow's next version: its task list is built (withTasks) when
 * first read, so a command list's steps (draft.ts) take the changes alone and never copy a large
 * flow's list per command. Spread or read, it is a plain FlowState.
 */
export class NextState implements FlowState {
  readonly flow: FlowRecord;
  declare readonly tasks: readonly TaskRecord[];
  /** Until the list is built: what it is built from (then let go, so no version holds another). */
  #before: Before | null;
  readonly #changes: TaskChanges;

  constructor(before: Before, changes: TaskChanges) {
    this.flow = nextFlow(before.flow);
    this.#before = before;
    this.#changes = changes;
    tasksOnRead(this, () => {
      this.#before = null;
      return withTasks(before.state, changes, before.index);
    });
  }

  /** The changes, when this is the state after `before` and its list was never built. */
  changesAfter(before: Before): TaskChanges | null {
    return this.#before === before ? this.#changes : null;
  }
}

/** Records a layered state carries over its base before the next version is flattened. */
const MAX_LAYERED = 256;

/**
 * A version's tasks as an earlier version's list with the records replaced since and the tasks
 * appended since, read by position; the list is built only when something reads it whole
 * (tasksOnRead). A copy of a 100k-task flow's list per version (a start, a completion) was
 * 0.8 MB in the old generation, and V8 ran a full collection every ~30 transitions; layered, a
 * version costs what changed, and a list is copied once per MAX_LAYERED records changed.
 */
export class LayeredState implements PositionedState {
  declare readonly tasks: readonly TaskRecord[];
  readonly size: number;

  private constructor(
    readonly flow: FlowRecord,
    private readonly base: readonly TaskRecord[],
    private readonly replaced: ReadonlyMap<number, TaskRecord>,
    private readonly appended: readonly TaskRecord[],
  ) {
    this.size = base.length + appended.length;
    tasksOnRead(this, () => {
      const tasks = base.concat(appended);
      for (const [i, task] of replaced) tasks[i] = task;
      return tasks;
    });
  }

  /**
   * A command's next state (`next`, made from `before` and its list never built) layered over
   * `before`'s; null when the command removed tasks (places move) or `next` is not such a state.
   */
  static after(before: Before, next: FlowState): LayeredState | null {
    const changes = next instanceof NextState ? next.changesAfter(before) : null;
    if (!changes || changes.remove?.size) return null;
    const { state, index } = before;
    // Over the same base as `before`, or over its list when that is built (or plain).
    const built = !(state instanceof LayeredState) || state.listBuilt();
    const base = built ? state.tasks : state.base;
    const replaced = new Map(built ? [] : state.replaced);
    const appended = built ? [] : [...state.appended];
    for (const task of changes.replace ?? []) {
      const i = index.get(task.id);
      if (i === undefined) return null;
      if (i < base.length) replaced.set(i, task);
      else appended[i - base.length] = task;
    }
    appended.push(...(changes.add ?? []));
    const layered = new LayeredState(next.flow, base, replaced, appended);
    return replaced.size + appended.length > MAX_LAYERED
      ? new LayeredState(next.flow, layered.tasks, new Map(), [])
      : layered;
  }

  /** Whether something read the list whole (tasksOnRead then left it a plain value). */
  private listBuilt(): boolean {
    return 'value' in (Object.getOwnPropertyDescriptor(this, 'tasks') ?? {});
  }

  at(position: number): TaskRecord | undefined {
    return position < this.base.length
      ? (this.replaced.get(position) ?? this.base[position])
      : this.appended[position - this.base.length];
  }
}

/**
 * The position after every task's: tasks are held in position order (loaded by it, new ones
 * appended after the last), so the last one's is the largest, read without a pass over a
 * large flow.
 */
export function nextPosition(view: {
  readonly size: number;
  at(position: number): TaskRecord | undefined;
}): number {
  return (view.at(view.size - 1)?.position ?? 0) + 1;
}
