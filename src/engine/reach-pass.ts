import type { Graph } from './graph.ts';

/**
 * Dense phase of blocking counts: exact downstream counts for a set of source tasks,
 * 128 sources per pass, with a small WebAssembly SIMD kernel.
 *
 * Each pass walks positions upward from its first source. A task's v128 `out` holds one
 * bit (lane) per source that reaches it, the OR of its predecessors' `out`, plus its own
 * lane if it is a source; every unfinished task adds its lanes to 128 bit-sliced counters.
 * Why WebAssembly: the same pass in JS has 32 lanes (Int32) and costs 4x as many passes;
 * measured at 100k tasks, the dense tasks' counts took 260 ms as JS bitset rows and
 * take ~35 ms here. Memory is O(n + edges): 16 bytes a task plus 4 an edge.
 *
 * KERNEL is src/engine/reach-pass.wat assembled (681 bytes). After editing the .wat:
 *   npx -y wabt@1.0.39 wat2wasm src/engine/reach-pass.wat --output=- | base64 -w 100
 * and paste the output below; the blocking-count property tests exercise every path.
 */
const KERNEL =
  'AGFzbQEAAAABEQJgAn97AGAIf39/f39/f38AAg8BA2VudgZtZW1vcnkCAAADAwIAAQcIAQRwYXNzAAEK6wQCMAEBewNAIAD9AAQA' +
  'IQIgACACIAH9Uf0LBAAgAiAB/U4hASAAQRBqIQAgAf1TDQALC7cEAgR/C3sgBSgCACEKA0AgAEH/AWogASAAQf8BaiABSRshCwNA' +
  '/QwAAAAAAAAAAAAAAAAAAAAAIQwgAiAAQQJ0aigCACEIIAIgAEECdGooAgQhCQJAA0AgCCAJTw0BIAwgCCgCAP0ABAD9UCEMIAhB' +
  'BGohCAwACwsgDCADIABqLQAA/Q/9TiENIA8gDf1OIQ4gDyAN/VEhDyAQIA79TiENIBAgDv1RIRAgESAN/U4hDiARIA39USERIBIg' +
  'Dv1OIQ0gEiAO/VEhEiATIA39TiEOIBMgDf1RIRMgFCAO/U4hDSAUIA79USEUIBUgDf1OIQ4gFSAN/VEhFSAWIA79USEWIAAgCkYE' +
  'QCAMIAb9AAQA/VAhDCAGQRBqIQYgBUEEaiEFIAUoAgAhCgsgBCAAQQR0aiAM/QsEACAAQQFqIQAgACALSQ0ACyAHIA8QACAHQRBq' +
  'IBAQACAHQSBqIBEQACAHQTBqIBIQACAHQcAAaiATEAAgB0HQAGogFBAAIAdB4ABqIBUQACAHQfAAaiAWEAD9DAAAAAAAAAAAAAAA' +
  'AAAAAAAhD/0MAAAAAAAAAAAAAAAAAAAAACEQ/QwAAAAAAAAAAAAAAAAAAAAAIRH9DAAAAAAAAAAAAAAAAAAAAAAhEv0MAAAAAAAA' +
  'AAAAAAAAAAAAACET/QwAAAAAAAAAAAAAAAAAAAAAIRT9DAAAAAAAAAAAAAAAAAAAAAAhFf0MAAAAAAAAAAAAAAAAAAAAACEWIAAg' +
  'AUkNAAsL';

export const PASS_LANES = 128;
const PLANES = 32;

/** The few WebAssembly calls used here, typed locally: our tsconfig has no DOM lib. */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: { pass: Pass } };
  Memory: new (size: { initial: number }) => { buffer: ArrayBuffer };
}
type Pass = (
  v: number,
  n: number,
  starts: number,
  open: number,
  out: number,
  sources: number,
  lanes: number,
  planes: number,
) => void;

const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;
const kernel = new wasm.Module(Buffer.from(KERNEL, 'base64'));

/**
 * counts[s] for each position in `sources` (ascending): how many open positions it
 * reaches. `pos` maps a node to its position in `order`; `perPass` (at most 128) is
 * lowered only by tests, to cross pass boundaries on small graphs.
 */
export function reachCounts(
  g: Graph,
  order: Uint32Array,
  pos: Uint32Array,
  open: Uint8Array,
  sources: Int32Array,
  perPass: number = PASS_LANES,
): Uint32Array {
  const n = g.n;
  const { predStart, pred } = g;
  const counts = new Uint32Array(sources.length);
  if (sources.length === 0) return counts;
  // Byte layout, as documented in the .wat; v128 areas 16-byte aligned.
  const out = 0;
  const starts = out + 16 * n;
  const preds = starts + 4 * (n + 1);
  const openAt = preds + 4 * pred.length;
  const sourceAt = (openAt + n + 15) & ~15;
  const lanes = sourceAt + 4 * (PASS_LANES + 1);
  const planes = lanes + 16 * PASS_LANES;
  const memory = new wasm.Memory({ initial: Math.ceil((planes + 16 * PLANES) / 65536) });
  const { pass } = new wasm.Instance(kernel, { env: { memory } }).exports;
  const words = new Int32Array(memory.buffer);
  const bytes = new Uint8Array(memory.buffer);

  let e = preds >> 2;
  for (let i = 0; i < n; i++) {
    words[(starts >> 2) + i] = e << 2;
    const v = order[i]!;
    for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++)
      words[e++] = out + 16 * pos[pred[k]!]!;
    bytes[openAt + i] = open[i] === 1 ? 0xff : 0;
  }
  words[(starts >> 2) + n] = e << 2;
  for (let l = 0; l < PASS_LANES; l++) words[(lanes >> 2) + 4 * l + (l >>> 5)] = 1 << (l & 31);

  const bits = 32 - Math.clz32(n); // a count is below n < 2^bits
  // Last group first: each pass starts lower than the one before, so positions below
  // its start were never written and still hold the zero the kernel expects there.
  const lastGroup = Math.floor((sources.length - 1) / perPass) * perPass;
  for (let s0 = lastGroup; s0 >= 0; s0 -= perPass) {
    const group = Math.min(perPass, sources.length - s0);
    words.set(sources.subarray(s0, s0 + group), sourceAt >> 2);
    words[(sourceAt >> 2) + group] = n;
    words.fill(0, planes >> 2, (planes >> 2) + 4 * PLANES);
    pass(sources[s0]!, n, starts, openAt, out, sourceAt, lanes, planes);
    for (let l = 0; l < group; l++) {
      let c = 0;
      for (let b = 0; b < bits; b++)
        c |= ((words[(planes >> 2) + 4 * b + (l >>> 5)]! >>> (l & 31)) & 1) << b;
      counts[s0 + l] = c;
    }
  }
  return counts;
}
