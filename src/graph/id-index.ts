/**
 * Two-way table between external task ids (strings) and the dense indexes the
 * typed-array engine works with. Indexes are handed out in insertion order, so a
 * caller that adds ids once per recompute gets a stable 0..size-1 numbering.
 */
export class IdIndex {
  readonly #byId = new Map<string, number>();
  readonly #ids: string[] = [];

  /** The index of `id`, adding it if new. */
  add(id: string): number {
    const known = this.#byId.get(id);
    if (known !== undefined) return known;
    const i = this.#ids.length;
    this.#ids.push(id);
    this.#byId.set(id, i);
    return i;
  }

  index(id: string): number | undefined {
    return this.#byId.get(id);
  }

  id(i: number): string {
    const id = this.#ids[i];
    if (id === undefined) throw new RangeError(`No id at index ${i}`);
    return id;
  }

  get size(): number {
    return this.#ids.length;
  }
}
