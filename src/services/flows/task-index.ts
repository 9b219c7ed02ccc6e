/**
 * A version's task index (id → position) when tasks were only appended: the version before's
 * index, shared, with the new tasks beside it. Copying a 100k-task flow's map for each task
 * added took milliseconds and megabytes; a chain of appends stays short, flattened past a depth.
 */
const MAX_DEPTH = 16;

const flattened = new WeakMap<AppendedIndex, Map<string, number>>();

export class AppendedIndex implements ReadonlyMap<string, number> {
  private constructor(
    private readonly base: ReadonlyMap<string, number>,
    private readonly added: ReadonlyMap<string, number>,
    private readonly depth: number,
  ) {}

  /** `base` with `ids` at positions `from`, `from + 1`, …. */
  static of(
    base: ReadonlyMap<string, number>,
    ids: readonly string[],
    from: number,
  ): ReadonlyMap<string, number> {
    const added = new Map(ids.map((id, k) => [id, from + k]));
    let under = base;
    let depth = base instanceof AppendedIndex ? base.depth + 1 : 1;
    if (depth > MAX_DEPTH && base instanceof AppendedIndex) {
      under = base.flat();
      depth = 1;
    }
    if (added.size * 8 < under.size) return new AppendedIndex(under, added, depth);
    const flat = new Map(under instanceof AppendedIndex ? under.flat() : under);
    for (const [id, at] of added) flat.set(id, at);
    return flat;
  }

  /**
   * This index as one map, made once: a command list's drafts each add to the same deep index,
   * and a flattening per draft copied a large flow's map per command.
   */
  private flat(): ReadonlyMap<string, number> {
    let flat = flattened.get(this);
    if (!flat) {
      const layers: ReadonlyMap<string, number>[] = [];
      let root: ReadonlyMap<string, number> = this;
      while (root instanceof AppendedIndex) {
        layers.push(root.added);
        root = root.base;
      }
      // A native copy of the first map, then each layer on it.
      flat = new Map(root);
      for (let k = layers.length - 1; k >= 0; k--)
        for (const [id, at] of layers[k] ?? []) flat.set(id, at);
      flattened.set(this, flat);
    }
    return flat;
  }

  /** Whether `index` is `base` itself or `base` with tasks appended (as far as its chain tells). */
  static extends(index: ReadonlyMap<string, number>, base: ReadonlyMap<string, number>): boolean {
    let at = index;
    while (at !== base && at instanceof AppendedIndex) at = at.base;
    return at === base;
  }

  get(id: string): number | undefined {
    return this.added.get(id) ?? this.base.get(id);
  }

  has(id: string): boolean {
    return this.added.has(id) || this.base.has(id);
  }

  get size(): number {
    return this.base.size + this.added.size;
  }

  forEach(each: (at: number, id: string, map: ReadonlyMap<string, number>) => void): void {
    for (const [id, at] of this) each(at, id, this);
  }

  *entries(): MapIterator<[string, number]> {
    yield* this.base.entries();
    yield* this.added.entries();
  }

  *keys(): MapIterator<string> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): MapIterator<number> {
    for (const [, at] of this.entries()) yield at;
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }
}
