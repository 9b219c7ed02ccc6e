/** Prometheus instruments (prom-client), one registry per server so tests can run several. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requestSeconds = new Histogram({
    name: 'flowplan_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'flowplan_rate_limit_refusals_total',
    help: 'Requests refused with 429 RATE_LIMITED, by budget (credential, address)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly requestChildren = new Map<string, { observe(value: number): void }>();

  /** Label children are cached: resolving labels on every request is a measurable cost. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.requestChildren.get(key);
    if (!child) this.requestChildren.set(key, (child = this.requestSeconds.labels(method, route, String(status))));
    child.observe(seconds);
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'flowplan_' });
  }

  /** A gauge read when scraped, for state owned elsewhere (pool, sessions, queues). */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({ name, help, registers: [this.registry], collect() { this.set(read()); } });
  }

  /** A gauge with labels read when scraped (an async query across processes): only the series `read` returns are exported. */
  gaugeByLabels(name: string, help: string, labelNames: readonly string[], read: () => Promise<{ labels: Record<string, string>; value: number }[]>): void {
    const gauge: Gauge = new Gauge({
      name, help, labelNames, registers: [this.registry],
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
      name, help, registers: [this.registry],
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
