import type { Graph } from './graph.ts';

/**
 * Dense phase of blocking counts: exact downstream counts for a set of source tasks,
 * 512 sources per pass, with a small WebAssembly SIMD kernel.
 *
 * Each pass walks positions upward from its first source. A task's 64-byte `out` holds
 * one bit (lane) per source that reaches it, the OR of its predecessors' `out`, plus its
 * own lane if it is a source; the open tasks' lanes are then added to 512 bit-sliced
 * counters, eight tasks at a time through a carry-save adder tree.
 * Why 512 lanes: a predecessor's lanes are one cache line, and the random reads of those
 * lines are most of a pass; at 128 lanes (16 bytes) each line served one quarter as many
 * sources. Why WebAssembly: the same pass in JS has 32 lanes (Int32).
 * Memory is O(n + edges): 64 bytes a task plus 4 an edge.
 *
 * KERNEL is src/engine/reach-pass.wat assembled. After editing the .wat:
 *   npx -y -p wabt@1.0.39 wat2wasm src/engine/reach-pass.wat -o /tmp/k.wasm && base64 -w 100 /tmp/k.wasm
 * and paste the output below; the blocking-count property tests exercise every path.
 */
const KERNEL =
  'AGFzbQEAAAABEQJgAn97AGAIf39/f39/f38AAg8BA2VudgZtZW1vcnkCAAADAwIAAQcIAQRwYXNzAAEKtQkCMAEBewNAIAD9AAQA' +
  'IQIgACACIAH9Uf0LBAAgAiAB/U4hASAAQRBqIQAgAf1TDQALC4EJAgh/FHsgBCgCACEKA0AgAEHwAWogASAAQfABaiABSRshCwNA' +
  '/QwAAAAAAAAAAAAAAAAAAAAAIRD9DAAAAAAAAAAAAAAAAAAAAAAhEf0MAAAAAAAAAAAAAAAAAAAAACES/QwAAAAAAAAAAAAAAAAA' +
  'AAAAIRMgAiAAQQJ0aigCACEIIAIgAEECdGooAgQhCQJAA0AgCCAJTw0BIAgoAgAhDCAQIAz9AAQA/VAhECARIAz9AAQQ/VAhESAS' +
  'IAz9AAQg/VAhEiATIAz9AAQw/VAhEyAIQQRqIQgMAAsLIAAgCkYEQCAQIAX9AAQA/VAhECARIAX9AAQQ/VAhESASIAX9AAQg/VAh' +
  'EiATIAX9AAQw/VAhEyAFQcAAaiEFIARBBGohBCAEKAIAIQoLIAMgAEEGdGohDCAMIBD9CwQAIAwgEf0LBBAgDCAS/QsEICAMIBP9' +
  'CwQwIABBAWohACAAIAtJDQALIAchDwJAA0AgDygCACAATw0BIA9BBGohDwwACwsgByAPIAdrQR9qIA8gB2sgACABTxtBYHFqIQ9B' +
  'ACENA0D9DAAAAAAAAAAAAAAAAAAAAAAhHP0MAAAAAAAAAAAAAAAAAAAAACEd/QwAAAAAAAAAAAAAAAAAAAAAIR79DAAAAAAAAAAA' +
  'AAAAAAAAAAAhH/0MAAAAAAAAAAAAAAAAAAAAACEg/QwAAAAAAAAAAAAAAAAAAAAAISH9DAAAAAAAAAAAAAAAAAAAAAAhIv0MAAAA' +
  'AAAAAAAAAAAAAAAAACEjIAMgDWohDCAHIQ4CQANAIA4gD08NASAMIA4oAgBBBnRq/QAEACEUIAwgDigCBEEGdGr9AAQAIRUgHCAU' +
  '/VEhFiAcIBT9TiAWIBX9Tv1QIRggFiAV/VEhHCAMIA4oAghBBnRq/QAEACEUIAwgDigCDEEGdGr9AAQAIRUgHCAU/VEhFiAcIBT9' +
  'TiAWIBX9Tv1QIRkgFiAV/VEhHCAdIBj9USEWIB0gGP1OIBYgGf1O/VAhGiAWIBn9USEdIAwgDigCEEEGdGr9AAQAIRQgDCAOKAIU' +
  'QQZ0av0ABAAhFSAcIBT9USEWIBwgFP1OIBYgFf1O/VAhGCAWIBX9USEcIAwgDigCGEEGdGr9AAQAIRQgDCAOKAIcQQZ0av0ABAAh' +
  'FSAcIBT9USEWIBwgFP1OIBYgFf1O/VAhGSAWIBX9USEcIB0gGP1RIRYgHSAY/U4gFiAZ/U79UCEbIBYgGf1RIR0gHiAa/VEhFiAe' +
  'IBr9TiAWIBv9Tv1QIRQgFiAb/VEhHiAfIBT9TiEXIB8gFP1RIR8gICAX/U4hFCAgIBf9USEgICEgFP1OIRcgISAU/VEhISAiIBf9' +
  'TiEUICIgF/1RISIgIyAU/VEhIyAOQSBqIQ4MAAsLIAYgDUEFdGohDCAMIBwQACAMQRBqIB0QACAMQSBqIB4QACAMQTBqIB8QACAM' +
  'QcAAaiAgEAAgDEHQAGogIRAAIAxB4ABqICIQACAMQfAAaiAjEAAgDUEQaiENIA1BwABJDQALIA8hByAAIAFJDQALCw==';

export const PASS_LANES = 512;
const PLANES = 32;
/** The kernel reads the open positions eight at a time; padding completes the last eight. */
const PAD = 7;

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
  out: number,
  sources: number,
  lanes: number,
  planes: number,
  opens: number,
) => void;

const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;
const kernel = new wasm.Module(Buffer.from(KERNEL, 'base64'));

/**
 * counts[s] for each position in `sources` (ascending): how many open positions it
 * reaches. `pos` maps a node to its position in `order`; `perPass` (at most 512) is
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
  let openTasks = 0;
  for (let i = 0; i < n; i++) openTasks += open[i]!;
  // Byte layout, as documented in the .wat; out 64-byte aligned, other v128 areas 16.
  const out = 0;
  const starts = out + 64 * (n + 1);
  const preds = starts + 4 * (n + 1);
  const opens = preds + 4 * pred.length;
  const sourceAt = opens + 4 * (openTasks + PAD);
  const lanes = (sourceAt + 4 * (PASS_LANES + 1) + 15) & ~15;
  const planes = lanes + 64 * PASS_LANES;
  const memory = new wasm.Memory({ initial: Math.ceil((planes + 64 * PLANES) / 65536) });
  const { pass } = new wasm.Instance(kernel, { env: { memory } }).exports;
  const words = new Int32Array(memory.buffer);

  let e = preds >> 2;
  let o = opens >> 2;
  for (let i = 0; i < n; i++) {
    words[(starts >> 2) + i] = e << 2;
    const v = order[i]!;
    for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++)
      words[e++] = out + 64 * pos[pred[k]!]!;
    if (open[i] === 1) words[o++] = i;
  }
  words[(starts >> 2) + n] = e << 2;
  words.fill(n, o, o + PAD);
  for (let l = 0; l < PASS_LANES; l++) words[(lanes >> 2) + 16 * l + (l >>> 5)] = 1 << (l & 31);

  const bits = 32 - Math.clz32(n); // a count is below n < 2^bits
  // Last group first: each pass starts lower than the one before, so positions below
  // its start were never written and still hold the zero the kernel expects there.
  const lastGroup = Math.floor((sources.length - 1) / perPass) * perPass;
  for (let s0 = lastGroup; s0 >= 0; s0 -= perPass) {
    const group = Math.min(perPass, sources.length - s0);
    const first = sources[s0]!;
    words.set(sources.subarray(s0, s0 + group), sourceAt >> 2);
    words[(sourceAt >> 2) + group] = n;
    words.fill(0, planes >> 2, (planes >> 2) + 16 * PLANES);
    while (o > opens >> 2 && words[o - 1]! >= first) o--;
    pass(first, n, starts, out, sourceAt, lanes, planes, o << 2);
    for (let l = 0; l < group; l++) {
      // Lane l: bit l % 128 of the planes of quarter l / 128.
      const at = (planes >> 2) + 4 * PLANES * (l >>> 7) + ((l & 127) >>> 5);
      let c = 0;
      for (let b = 0; b < bits; b++) c |= ((words[at + 4 * b]! >>> (l & 31)) & 1) << b;
      // The kernel counts an open source as reaching itself; a task does not block itself.
      counts[s0 + l] = c - open[sources[s0 + l]!]!;
    }
  }
  return counts;
}
