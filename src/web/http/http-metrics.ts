/** The edge's own instruments: request latency by route, and refusals by budget. */
import { Counter, Histogram } from 'prom-client';
import type { Metrics } from '../../platform/metrics.ts';

export class HttpMetrics {
  readonly requestSeconds: Histogram<'method' | 'route' | 'status'>;
  readonly rateLimited: Counter<'reason'>;
  private readonly requestChildren = new Map<string, { observe(value: number): void }>();

  constructor(metrics: Metrics) {
    this.requestSeconds = new Histogram({
      name: 'flowplan_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [metrics.registry],
    });
    this.rateLimited = new Counter({
      name: 'flowplan_rate_limit_refusals_total',
      help: 'Requests refused with 429 RATE_LIMITED, by budget (credential, address, failed-credential, pending-upgrades)',
      labelNames: ['reason'] as const,
      registers: [metrics.registry],
    });
  }

  /** Label children are cached: resolving labels on every request is a measurable cost. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.requestChildren.get(key);
    if (!child)
      this.requestChildren.set(
        key,
        (child = this.requestSeconds.labels(method, route, String(status))),
      );
    child.observe(seconds);
  }
}
