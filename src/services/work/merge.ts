/**
 * The first `count` elements of a k-way merge of sorted runs: a binary heap over the runs'
 * heads, so a first page of a workspace view costs about (runs + count · log runs)
 * comparisons however long the runs are.
 */

export interface Run {
  readonly items: readonly unknown[];
}

type Item<R extends Run> = R['items'][number];

interface Cursor<R> {
  readonly run: R;
  at: number;
}

export function mergeFirst<R extends Run>(
  runs: readonly R[],
  count: number,
  compare: (runA: R, a: Item<R>, runB: R, b: Item<R>) => number,
): { run: R; item: Item<R> }[] {
  const heap: Cursor<R>[] = runs
    .filter((run) => run.items.length > 0)
    .map((run) => ({ run, at: 0 }));
  const less = (x: Cursor<R>, y: Cursor<R>) =>
    compare(x.run, x.run.items[x.at]!, y.run, y.run.items[y.at]!) < 0;
  const siftDown = (from: number) => {
    for (let k = from; ;) {
      const left = 2 * k + 1;
      if (left >= heap.length) return;
      const child = left + 1 < heap.length && less(heap[left + 1]!, heap[left]!) ? left + 1 : left;
      if (!less(heap[child]!, heap[k]!)) return;
      [heap[k], heap[child]] = [heap[child]!, heap[k]!];
      k = child;
    }
  };
  for (let k = (heap.length >> 1) - 1; k >= 0; k--) siftDown(k);
  const out: { run: R; item: Item<R> }[] = [];
  while (out.length < count && heap.length > 0) {
    const top = heap[0]!;
    out.push({ run: top.run, item: top.run.items[top.at]! });
    if (++top.at === top.run.items.length) {
      const last = heap.pop()!;
      if (heap.length === 0) break;
      heap[0] = last;
    }
    siftDown(0);
  }
  return out;
}
