/**
 * A version's task index (id → position) when tasks were only appended: the version before's
 * index, shared, with the new tasks beside it. Copying a 100k-task flow's map for each task
 * added took milliseconds and megabytes; a chain of appends stays short, flattened past a depth.
 */
const MAX_DEPTH = 16;

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
    const depth = base instanceof AppendedIndex ? base.depth + 1 : 1;
    const added = new Map(ids.map((id, k) => [id, from + k]));
    if (depth <= MAX_DEPTH && added.size * 8 < base.size)
      return new AppendedIndex(base, added, depth);
    const flat = new Map(base);
    for (const [id, at] of added) flat.set(id, at);
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
