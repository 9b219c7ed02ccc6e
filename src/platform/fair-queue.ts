/**
 * Jobs waiting for a pool's workers, shared among tenants (workspaces) in turn: a queue per
 * tenant, first in first out, and the next job always comes from the waiting tenant served
 * least recently. A tenant not served since it last had nothing pending (waiting or running)
 * counts as never served, and goes first; ties go to the tenant that began waiting first. So
 * one tenant's hundred queued jobs cannot keep another's one waiting: each waiting tenant has a
 * job started before any tenant has two more.
 */
export class FairQueue<J> {
  /** Each tenant's waiting jobs, in arrival order; a tenant is here only while it has some. */
  readonly #waiting = new Map<string, J[]>();
  /** Per tenant with jobs pending: when it was last served (a count of jobs handed out), and how many of its jobs run. */
  readonly #pending = new Map<string, { served: number; running: number }>();
  #handedOut = 0;
  #size = 0;

  /** Jobs waiting, every tenant's. */
  get size(): number {
    return this.#size;
  }

  push(tenant: string, job: J): void {
    const jobs = this.#waiting.get(tenant);
    if (jobs) jobs.push(job);
    else this.#waiting.set(tenant, [job]);
    if (!this.#pending.has(tenant)) this.#pending.set(tenant, { served: -1, running: 0 });
    this.#size++;
  }

  /** The next job to start and its tenant (counted as running until `done`); undefined when none waits. */
  shift(): { tenant: string; job: J } | undefined {
    let next: string | undefined;
    let least = Infinity;
    // Few tenants wait at once (the pool's admission bounds them): a scan is enough.
    for (const tenant of this.#waiting.keys()) {
      const served = this.#pending.get(tenant)?.served ?? -1;
      if (served < least) [next, least] = [tenant, served];
    }
    if (next === undefined) return undefined;
    const jobs = this.#waiting.get(next) ?? [];
    const job = jobs.shift() as J;
    if (jobs.length === 0) this.#waiting.delete(next);
    const pending = this.#pending.get(next) ?? { served: -1, running: 0 };
    pending.served = this.#handedOut++;
    pending.running++;
    this.#pending.set(next, pending);
    this.#size--;
    return { tenant: next, job };
  }

  /** A job `shift` handed out for `tenant` has ended. */
  done(tenant: string): void {
    const pending = this.#pending.get(tenant);
    if (!pending) return;
    pending.running--;
    if (pending.running <= 0 && !this.#waiting.has(tenant)) this.#pending.delete(tenant);
  }

  /** Every waiting job, taken out (a pool closing refuses them). */
  drain(): J[] {
    const jobs = [...this.#waiting.values()].flat();
    this.#waiting.clear();
    for (const [tenant, pending] of this.#pending)
      if (pending.running <= 0) this.#pending.delete(tenant);
    this.#size = 0;
    return jobs;
  }
}
