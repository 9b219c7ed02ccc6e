/**
 * The WebAssembly kernel of blocking counts (blocking.ts): every loop of the count, over
 * typed arrays laid out in one memory. Why WebAssembly: its v128 lanes give the dense
 * passes 512 sources each (one 64-byte cache line a task), against 32 in JS (Int32); the
 * sparse lists and the rows by position are built in the same memory, so nothing is
 * copied between phases (they measured no faster in JS).
 *
 * KERNEL is src/engine/blocking-kernel.wat assembled. After editing the .wat:
 *   npx -y -p wabt@1.0.39 wat2wasm src/engine/blocking-kernel.wat -o /tmp/k.wasm && base64 -w 100 /tmp/k.wasm
 * and paste the output below; the blocking-count property tests exercise every path.
 */
const KERNEL =
  'AGFzbQEAAAABRgdgDX9/f39/f39/f39/f38AYAp/f39/f39/f39/AGADf39/AX9gAn97AGAJf39/f39/f39/AGAGf39/f39/AGAE' +
  'f39/fwACDwEDZW52Bm1lbW9yeQIAAAMJCAABAgIDBAUGB0YHB3ByZXBhcmUAAAZzcGFyc2UAAQpkZW5zZVRhc2tzAAIJb3BlblRh' +
  'c2tzAAMEcGFzcwAFBnNldHRsZQAGBmJ5Tm9kZQAHCuIVCKwDAQZ/AkADQCANIABPDQEgAiANQQJ0aigCACEOIAYgDkECdGogDTYC' +
  'ACAHIA1qIAUgDmotAAAgAUc6AAAgDUEBaiENDAALC0EAIQ0CQANAIA0gAE8NASAIIA1BAnRqIBE2AgAgAiANQQJ0aigCAEECdCEO' +
  'IAMgDmooAgAhDyADIA5qKAIEIRACQANAIA8gEE8NASAGIAQgD0ECdGooAgBBAnRqKAIAIRIgCSARQQJ0aiASNgIAIAogEkECdGoh' +
  'EiASIBIoAgRBAWo2AgQgEUEBaiERIA9BAWohDwwACwsgDUEBaiENDAALCyAIIABBAnRqIBE2AgBBACENAkADQCANIABPDQEgCiAN' +
  'QQJ0aiESIAwgDUECdGogEigCADYCACASIBIoAgQgEigCAGo2AgQgDUEBaiENDAALC0EAIQ1BACEPAkADQCANIABPDQEgCCANQQJ0' +
  'aigCBCEQAkADQCAPIBBPDQEgDCAJIA9BAnRqKAIAQQJ0aiESIBIoAgAhESASIBFBAWo2AgAgCyARQQJ0aiANNgIAIA9BAWohDwwA' +
  'CwsgDUEBaiENDAALCwuNAwEKfyAAIQogByEPIAcgCUECdGohCSAIQQJ0IQgCQANAIApFDQEgCkEBayEKIAIgASAKQQJ0aigCAEEC' +
  'dGohCyACIAEgCkECdGooAgRBAnRqIQwCQCALIRICQANAIBIgDE8NASAEIBIoAgBBAnRqKAIAQQBIDQIgEkEEaiESDAALCyAPIAhq' +
  'IAkgDyAIaiAJSRshESAPIRACQANAIAsgDE8NASALKAIAIQ0gC0EEaiELAkAgAyANai0AAARAIAYgDUECdGooAgAgCkYNASAQIBFP' +
  'DQQgBiANQQJ0aiAKNgIAIBAgDTYCACAQQQRqIRALIAUgDUECdGooAgAhEiASIAQgDUECdGooAgBBAnRqIRMCQANAIBIgE08NASAS' +
  'KAIAQQJ0IQ4gEkEEaiESIAYgDmooAgAgCkYNACAQIBFPDQUgBiAOaiAKNgIAIBAgDkECdjYCACAQQQRqIRAMAAsLCwwACwsgBSAK' +
  'QQJ0aiAPNgIAIAQgCkECdGogECAPa0ECdjYCACAQIQ8LDAALCwtFAQJ/IAIhBAJAA0AgAyAATw0BIAEgA0ECdGooAgBBAEgEQCAE' +
  'IAM2AgAgBEEEaiEECyADQQFqIQMMAAsLIAQgAmtBAnYLVwEBfwJAA0AgAyAATw0BIAIgAzYCACACIAEgA2otAABBAnRqIQIgA0EB' +
  'aiEDDAALC0EAIQMCQANAIANBHE8NASACIANqIAA2AgAgA0EEaiEDDAALCyACCzABAXsDQCAA/QAEACECIAAgAiAB/VH9CwQAIAIg' +
  'Af1OIQEgAEEQaiEAIAH9Uw0ACwuIDAIKfxR7IAQoAgAhCSAJIQ0gByEKIAghEgJAA0AgCiASTw0BIAogEiAKa0EDdkECdGohDyAP' +
  'KAIAIAlJBEAgD0EEaiEKBSAPIRILDAALCwNAIAlB8AFqIAAgCUHwAWogAEkbIQ4DQP0MAAAAAAAAAAAAAAAAAAAAACET/QwAAAAA' +
  'AAAAAAAAAAAAAAAAIRT9DAAAAAAAAAAAAAAAAAAAAAAhFf0MAAAAAAAAAAAAAAAAAAAAACEWIAEgCUECdGohDyACIA8oAgBBAnRq' +
  'IQsgAiAPKAIEQQJ0aiEMAkADQCALIAxPDQEgAyALKAIAQQZ0aiEPIBMgD/0ABAD9UCETIBQgD/0ABBD9UCEUIBUgD/0ABCD9UCEV' +
  'IBYgD/0ABDD9UCEWIAtBBGohCwwACwsgCSANRgRAIBMgBf0ABAD9UCETIBQgBf0ABBD9UCEUIBUgBf0ABCD9UCEVIBYgBf0ABDD9' +
  'UCEWIAVBwABqIQUgBEEEaiEEIAQoAgAhDQsgAyAJQQZ0aiEPIA8gE/0LBAAgDyAU/QsEECAPIBX9CwQgIA8gFv0LBDAgCUEBaiEJ' +
  'IAkgDkkNAAsgCiESAkADQCASKAIAIAlPDQEgEkEEaiESDAALCyAKIBIgCmtBH2ogEiAKayAJIABPG0FgcWohEkEAIRADQP0MAAAA' +
  'AAAAAAAAAAAAAAAAACEf/QwAAAAAAAAAAAAAAAAAAAAAISD9DAAAAAAAAAAAAAAAAAAAAAAhIf0MAAAAAAAAAAAAAAAAAAAAACEi' +
  '/QwAAAAAAAAAAAAAAAAAAAAAISP9DAAAAAAAAAAAAAAAAAAAAAAhJP0MAAAAAAAAAAAAAAAAAAAAACEl/QwAAAAAAAAAAAAAAAAA' +
  'AAAAISYgAyAQaiEPIAohEQJAA0AgESASTw0BIA8gESgCAEEGdGr9AAQAIRcgDyARKAIEQQZ0av0ABAAhGCAfIBf9USEZIB8gF/1O' +
  'IBkgGP1O/VAhGyAZIBj9USEfIA8gESgCCEEGdGr9AAQAIRcgDyARKAIMQQZ0av0ABAAhGCAfIBf9USEZIB8gF/1OIBkgGP1O/VAh' +
  'HCAZIBj9USEfICAgG/1RIRkgICAb/U4gGSAc/U79UCEdIBkgHP1RISAgDyARKAIQQQZ0av0ABAAhFyAPIBEoAhRBBnRq/QAEACEY' +
  'IB8gF/1RIRkgHyAX/U4gGSAY/U79UCEbIBkgGP1RIR8gDyARKAIYQQZ0av0ABAAhFyAPIBEoAhxBBnRq/QAEACEYIB8gF/1RIRkg' +
  'HyAX/U4gGSAY/U79UCEcIBkgGP1RIR8gICAb/VEhGSAgIBv9TiAZIBz9Tv1QIR4gGSAc/VEhICAhIB39USEZICEgHf1OIBkgHv1O' +
  '/VAhFyAZIB79USEhICIgF/1OIRogIiAX/VEhIiAjIBr9TiEXICMgGv1RISMgJCAX/U4hGiAkIBf9USEkICUgGv1OIRcgJSAa/VEh' +
  'JSAmIBf9USEmIBFBIGohEQwACwsgBiAQQQV0aiEP/QwAAAAAAAAAAAAAAAAAAAAAIRogD/0ABAAhGSAZIB/9USEXIA8gFyAa/VH9' +
  'CwQAIBkgH/1OIBcgGv1O/VAhGiAP/QAEECEZIBkgIP1RIRcgDyAXIBr9Uf0LBBAgGSAg/U4gFyAa/U79UCEaIA/9AAQgIRkgGSAh' +
  '/VEhFyAPIBcgGv1R/QsEICAZICH9TiAXIBr9Tv1QIRogD/0ABDAhGSAZICL9USEXIA8gFyAa/VH9CwQwIBkgIv1OIBcgGv1O/VAh' +
  'GiAP/QAEQCEZIBkgI/1RIRcgDyAXIBr9Uf0LBEAgGSAj/U4gFyAa/U79UCEaIA/9AARQIRkgGSAk/VEhFyAPIBcgGv1R/QsEUCAZ' +
  'ICT9TiAXIBr9Tv1QIRogD/0ABGAhGSAZICX9USEXIA8gFyAa/VH9CwRgIBkgJf1OIBcgGv1O/VAhGiAP/QAEcCEZIBkgJv1RIRcg' +
  'DyAXIBr9Uf0LBHAgGSAm/U4gFyAa/U79UCEaIA9BgAFqIBoQBCAQQRBqIRAgEEHAAEkNAAsgEiEKIAkgAEkNAAsLjwEBBX8CQANA' +
  'IAYgAE8NASACIAZBB3ZBCXQgBkH/AHFBBXZBAnRqaiEJQQAhCEEAIQcCQANAIAcgAU8NASAIIAkoAgAgBnZBAXEgB3RyIQggCUEQ' +
  'aiEJIAdBAWohBwwACwsgAyAGQQJ0aigCACEKIAUgCkECdGogCCAEIApqLQAAazYCACAGQQFqIQYMAAsLCzkBAX8CQANAIAQgAE8N' +
  'ASADIAEgBEECdGooAgBBAnRqIAIgBEECdGooAgA2AgAgBEEBaiEEDAALCws=';

/** Sources per dense pass: one bit each in a 64-byte line per task. */
export const PASS_LANES = 512;

/** The kernel's exports; every address is a byte offset into its memory. */
export interface BlockingKernel {
  prepare(
    n: number,
    done: number,
    order: number,
    predStart: number,
    pred: number,
    progress: number,
    pos: number,
    open: number,
    pstart: number,
    ppos: number,
    sstart: number,
    sadj: number,
    fill: number,
  ): void;
  sparse(
    n: number,
    sstart: number,
    sadj: number,
    open: number,
    counts: number,
    first: number,
    stamp: number,
    arena: number,
    limit: number,
    budget: number,
  ): void;
  denseTasks(n: number, counts: number, dense: number): number;
  openTasks(n: number, open: number, opens: number): number;
  pass(
    n: number,
    pstart: number,
    ppos: number,
    out: number,
    sources: number,
    lanes: number,
    planes: number,
    opens: number,
    openEnd: number,
  ): void;
  settle(
    group: number,
    bits: number,
    planes: number,
    sources: number,
    open: number,
    counts: number,
  ): void;
  byNode(n: number, order: number, counts: number, result: number): void;
}

/** The few WebAssembly calls used here, typed locally: our tsconfig has no DOM lib. */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: BlockingKernel };
  Memory: new (size: { initial: number }) => Memory;
}
interface Memory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;
const kernel = new wasm.Module(Buffer.from(KERNEL, 'base64'));

const PAGE = 65536;
/**
 * The largest memory kept for the next count in this thread: a fresh one costs page faults
 * and garbage collection (at 100k tasks, a fifth of the count's time), while a kept one
 * costs its size for the thread's life. 64 MB covers a flow of about 200k tasks.
 */
const KEEP_BYTES = 64 * 1024 * 1024;
let kept: { kernel: BlockingKernel; memory: Memory } | null = null;

function instance(pages: number): { kernel: BlockingKernel; memory: Memory } {
  const memory = new wasm.Memory({ initial: pages });
  return { kernel: new wasm.Instance(kernel, { env: { memory } }).exports, memory };
}

/**
 * A kernel instance over a memory of at least `bytes`, whose contents are left over from an
 * earlier count: the caller clears what it reads before writing.
 */
export function blockingKernel(bytes: number): { kernel: BlockingKernel; buffer: ArrayBuffer } {
  const pages = Math.ceil(bytes / PAGE);
  if (bytes > KEEP_BYTES) {
    const fresh = instance(pages);
    return { kernel: fresh.kernel, buffer: fresh.memory.buffer };
  }
  kept ??= instance(pages);
  const have = kept.memory.buffer.byteLength / PAGE;
  if (have < pages) kept.memory.grow(pages - have);
  return { kernel: kept.kernel, buffer: kept.memory.buffer };
}
