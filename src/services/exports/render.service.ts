/**
 * The render pool: every export and diagram is drawn in a worker thread, never on the
 * event loop. Started lazily (its workers load resvg, pdfkit and fonts: memory a process that
 * never exports should not hold), with a timeout per render counted from the moment a worker
 * begins it, and a bound on renders in flight: past it, callers get 503 with Retry-After
 * instead of a queue that only grows. A render that throws or overruns its time is 502 RENDER_FAILED.
 * PNG and PDF exports run one at a time per process (a large one holds up to ~200 MB while it
 * draws: bench:export's `alone.extraMB`); the rest wait their turn in order, so concurrent
 * exports queue instead of multiplying memory. Diagram SVGs, small and cached, do not wait.
 */
import type { Logger } from 'pino';
import { Piscina } from 'piscina';
import { busy, DomainError } from '../../platform/errors.ts';
import { runTimed, workerModule, type Started } from '../../platform/worker-pool.ts';
import type { RenderOutput, RenderTask } from './render-task.ts';
import type { DiagramModel } from './diagram.ts';
import type { PlanDocument } from './pdf.ts';
import type { SvgOptions } from './svg.ts';

const WORKER_URL = workerModule('../../../workers/render.worker.ts', import.meta.url);
const IDLE_TIMEOUT_MS = 30_000;

export interface RenderServiceOptions {
  threads: number;
  timeoutMs: number;
  maxInFlight: number;
  log: Logger;
  /** Test hook: every render fails in the worker. Set only by tests through startApp's options. */
  failRenders?: boolean;
  /** Test hook: every render waits this long in the worker first. Set only by tests through startApp's options. */
  renderDelayMs?: number;
}

export class RenderService {
  readonly #opts: RenderServiceOptions;
  #pool: Piscina<RenderTask & { fail?: boolean; delayMs?: number } & Started, RenderOutput> | null =
    null;
  #inFlight = 0;
  #completed = 0;
  /** Exports waiting for the one export slot, in arrival order; `#exporting` holds it. */
  readonly #exportQueue: (() => void)[] = [];
  #exporting = false;
  /** The thread that ran the last render (tests prove the pool ran it). */
  lastThreadId = 0;

  constructor(opts: RenderServiceOptions) {
    this.#opts = opts;
  }

  /** The whole dependency diagram as SVG markup (callers cache it per flow version). */
  async diagramSvg(model: DiagramModel, options?: SvgOptions): Promise<string> {
    return (await this.#run({ kind: 'svg', model, options })) as string;
  }

  async png(model: DiagramModel): Promise<Buffer> {
    return Buffer.from((await this.#export({ kind: 'png', model })) as Uint8Array);
  }

  async pdf(document: PlanDocument): Promise<Buffer> {
    return Buffer.from((await this.#export({ kind: 'pdf', document })) as Uint8Array);
  }

  /** An export in its turn: counted in flight (and refused past the bound) while it waits too. */
  async #export(task: RenderTask): Promise<string | Uint8Array> {
    return this.#run(
      task,
      async () => {
        if (this.#exporting) await new Promise<void>((resolve) => this.#exportQueue.push(resolve));
        this.#exporting = true;
      },
      () => {
        const next = this.#exportQueue.shift();
        if (next) next();
        else this.#exporting = false;
      },
    );
  }

  async #run(
    task: RenderTask,
    turn?: () => Promise<void>,
    done?: () => void,
  ): Promise<string | Uint8Array> {
    if (this.#inFlight >= this.#opts.maxInFlight) {
      throw busy('renders', 2);
    }
    this.#inFlight++;
    await turn?.();
    try {
      const pool = (this.#pool ??= new Piscina({
        filename: WORKER_URL.href,
        maxThreads: this.#opts.threads,
        minThreads: 0,
        idleTimeout: IDLE_TIMEOUT_MS,
      }));
      const input = {
        ...task,
        ...(this.#opts.failRenders ? { fail: true } : {}),
        ...(this.#opts.renderDelayMs ? { delayMs: this.#opts.renderDelayMs } : {}),
      };
      const output = await runTimed(pool, input, this.#opts.timeoutMs);
      this.#completed++;
      this.lastThreadId = output.threadId;
      return output.result;
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'AbortError';
      this.#opts.log.error({ err, kind: task.kind }, 'render failed');
      throw new DomainError(
        'RENDER_FAILED',
        timedOut ? 'Rendering took too long' : 'Rendering failed',
      );
    } finally {
      this.#inFlight--;
      done?.();
    }
  }

  stats(): {
    inFlight: number;
    completed: number;
    utilization: number;
    queueSize: number;
    exportsWaiting: number;
    exporting: boolean;
  } {
    return {
      inFlight: this.#inFlight,
      completed: this.#completed,
      utilization: this.#pool?.utilization ?? 0,
      queueSize: this.#pool?.queueSize ?? 0,
      exportsWaiting: this.#exportQueue.length,
      exporting: this.#exporting,
    };
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    if (pool) await pool.close();
  }
}
