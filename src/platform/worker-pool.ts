/**
 * Runs on the Piscina pools (recompute, render) whose timeouts count from the moment a
 * worker begins the task, not from the call: time spent queued behind other runs, or waiting
 * for a worker thread to start and compile its module, is not charged to the task. The
 * task carries a port on which the worker says it has begun (`markStarted`, first thing).
 */
import { MessageChannel, type MessagePort, type Transferable } from 'node:worker_threads';
import type { Piscina } from 'piscina';

/**
 * A worker module's URL from the module that starts it. tsc rewrites the `.ts` of import
 * specifiers but not of URLs, so built code (a `.js` module) asks for the `.js` worker that
 * `npm run build` emitted beside the others, and code run through tsx for the `.ts` source.
 */
export function workerModule(relative: string, base: string): URL {
  return new URL(base.endsWith('.ts') ? relative : relative.replace(/\.ts$/, '.js'), base);
}

/** What a worker hands back: its result, and the thread that ran it (so callers can tell the pool did). */
export type FromWorker<T> = T & { threadId: number };

export interface Started {
  /** Set by runTimed; the worker calls markStarted with its task. */
  started?: MessagePort;
}

/** Worker side: the run has begun, so its timeout starts now. */
export function markStarted(task: Started): void {
  task.started?.postMessage(null);
}

/**
 * Runs `task` on `pool`; a run still going `timeoutMs` after its worker began it is aborted
 * (Piscina stops that worker and starts another), rejecting with an AbortError.
 */
export async function runTimed<T extends object, R>(
  pool: Piscina<T & Started, R>,
  task: T,
  timeoutMs: number,
  transferList: Transferable[] = [],
  /** The worker module's export to run; its default when absent. */
  name?: string,
): Promise<R> {
  const { port1, port2 } = new MessageChannel();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  port1.once('message', () => {
    if (!settled) timer = setTimeout(() => abort.abort(), timeoutMs);
  });
  try {
    return await pool.run(
      { ...task, started: port2 },
      {
        transferList: [...transferList, port2] as never,
        signal: abort.signal,
        ...(name ? { name } : {}),
      },
    );
  } finally {
    settled = true;
    clearTimeout(timer);
    port1.close();
  }
}
