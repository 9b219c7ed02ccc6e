/**
 * Deliberately naive reference for the graph engine: objects, Maps, one DFS/BFS per
 * question, recursion allowed (small graphs only). Written straight from the product
 * rules so the property tests compare the typed-array engine against the contract.
 */
export interface RefGraph {
  n: number;
  edges: Array<[from: number, to: number]>; // `to` depends on `from`
  progress: number[]; // 0 open, 1 started, 2 done
  duration: number[];
}

const DONE = 2;

function adjacency(g: RefGraph): { preds: Map<number, number[]>; succs: Map<number, number[]> } {
  const preds = new Map<number, number[]>();
  const succs = new Map<number, number[]>();
  for (let v = 0; v < g.n; v++) {
    preds.set(v, []);
    succs.set(v, []);
  }
  for (const [f, t] of g.edges) {
    preds.get(t)!.push(f);
    succs.get(f)!.push(t);
  }
  return { preds, succs };
}

export function refStatus(g: RefGraph): string[] {
  const { preds } = adjacency(g);
  return g.progress.map((p, v) => {
    if (p === DONE) return 'done';
    if (p === 1) return 'in_progress';
    return preds.get(v)!.every((u) => g.progress[u] === DONE) ? 'ready' : 'blocked';
  });
}

/** True when every edge goes from an earlier to a later position and order is a permutation. */
export function refIsTopological(
  n: number,
  edges: RefGraph['edges'],
  order: ArrayLike<number>,
): boolean {
  if (order.length !== n) return false;
  const position = new Map<number, number>();
  for (let i = 0; i < order.length; i++) position.set(order[i]!, i);
  if (position.size !== n) return false;
  return edges.every(([f, t]) => position.get(f)! < position.get(t)!);
}

export interface RefCpm {
  es: number[];
  ef: number[];
  ls: number[];
  lf: number[];
  slack: number[];
  critical: boolean[];
  finish: number;
}

export function refCpm(g: RefGraph): RefCpm {
  const { preds, succs } = adjacency(g);
  const open = (v: number): boolean => g.progress[v] !== DONE;
  const esMemo = new Map<number, number>();
  const es = (v: number): number => {
    if (!esMemo.has(v)) {
      const after = preds
        .get(v)!
        .filter(open)
        .map((p) => es(p) + g.duration[p]!);
      esMemo.set(v, Math.max(0, ...after));
    }
    return esMemo.get(v)!;
  };
  const ef = (v: number): number => es(v) + g.duration[v]! - 1;
  const all = [...Array(g.n).keys()];
  const finish = Math.max(-1, ...all.filter(open).map(ef));
  const lfMemo = new Map<number, number>();
  const lf = (v: number): number => {
    if (!lfMemo.has(v)) {
      const later = succs.get(v)!.filter(open);
      lfMemo.set(
        v,
        later.length === 0 ? finish : Math.min(...later.map((s) => lf(s) - g.duration[s]!)),
      );
    }
    return lfMemo.get(v)!;
  };
  const field = (f: (v: number) => number): number[] => all.map((v) => (open(v) ? f(v) : -1));
  const slack = field((v) => lf(v) - g.duration[v]! + 1 - es(v));
  return {
    es: field(es),
    ef: field(ef),
    ls: field((v) => lf(v) - g.duration[v]! + 1),
    lf: field(lf),
    slack,
    critical: slack.map((s) => s === 0),
    finish,
  };
}

/** Per node: a fresh BFS downstream, counting the unfinished tasks reached. */
export function refBlockingCounts(g: RefGraph): number[] {
  const { succs } = adjacency(g);
  return [...Array(g.n).keys()].map((start) => {
    const seen = new Set<number>();
    const queue = [...succs.get(start)!];
    while (queue.length > 0) {
      const v = queue.shift()!;
      if (seen.has(v)) continue;
      seen.add(v);
      queue.push(...succs.get(v)!);
    }
    return [...seen].filter((v) => g.progress[v] !== DONE).length;
  });
}

/** Nodes reachable downstream of `start` (itself excluded unless on a cycle). */
export function refReachable(g: RefGraph, start: number): number[] {
  const { succs } = adjacency(g);
  const seen = new Set<number>();
  const stack = [...succs.get(start)!];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (seen.has(v)) continue;
    seen.add(v);
    stack.push(...succs.get(v)!);
  }
  return [...seen];
}
