/**
 * The Prometheus registry (prom-client), one per server so tests can run several. Each
 * component registers the instruments it owns on it (the edge its request metrics, the pool,
 * sessions, jobs and webhooks theirs); the metrics listener serves it.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'flowplan_' });
  }

  /** A gauge read when scraped, for state owned elsewhere (pool, sessions, queues). */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A gauge with labels read when scraped (an async query across processes): only the series `read` returns are exported. */
  gaugeByLabels(
    name: string,
    help: string,
    labelNames: readonly string[],
    read: () => Promise<{ labels: Record<string, string>; value: number }[]>,
  ): void {
    const gauge: Gauge = new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        const series = await read();
        gauge.reset();
        for (const { labels, value } of series) gauge.set(labels, value);
      },
    });
  }

  /** A counter read when scraped, for a total owned elsewhere (it only grows). */
  total(name: string, help: string, read: () => number): void {
    let last = 0;
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        const now = read();
        if (now > last) this.inc(now - last);
        last = now;
      },
    });
  }

  histogram(name: string, help: string, buckets: number[]): Histogram {
    return new Histogram({ name, help, buckets, registers: [this.registry] });
  }
}
