/**
 * The Grafana dashboard (ops/grafana-dashboard.json) only charts metrics the server really
 * exports: after some work, every flowplan_* series its queries name is on /metrics.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { newFlow, ok, startFlowServer } from '../helpers/flows.ts';
import { assertError, item } from '../helpers/server.ts';

t.test('every metric the dashboard queries is exported', async (t) => {
  const dashboard = JSON.parse(readFileSync('ops/grafana-dashboard.json', 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  // A budget of 3 that refills once a minute. The fourth request is refused, unless a lease of
  // the shared bucket took over 250 ms (a loaded machine): that request then spent from the
  // process's own bucket of 3 (src/services/limits/shared-rate-limit.ts), and a few more are
  // needed; within ten, the two buckets are spent.
  const s = await startFlowServer(t, { rateLimitPerMinute: 1, rateLimitBurst: 3 });
  const flow = await newFlow(t, s, { name: 'Metrics', tasks: [{ name: 'A' }] });
  // Derived from the version before: an incremental derivation.
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);
  await ok(t, s, 'GET', '/v1/work/available');
  const read = () => s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  let refused = await read();
  for (let sent = 4; refused.status === 200 && sent < 10; sent++) refused = await read();
  assertError(t, refused, 429, 'RATE_LIMITED', 'a request over the budget is refused');
  const exported = await s.metrics();
  const families = new Set([...exported.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  const used = new Set(
    dashboard.panels.flatMap((p) =>
      p.targets.flatMap((target) => target.expr.match(/flowplan_[a-z0-9_]+/g) ?? []),
    ),
  );
  t.ok(used.size >= 20, `the dashboard charts ${used.size} series`);
  for (const name of used) {
    const family = name.replace(/_(bucket|count|sum)$/, '');
    t.ok(families.has(family) || families.has(name), `${name} is exported`);
  }
  t.match(
    exported,
    /flowplan_rate_limit_refusals_total\{reason="credential"\} [1-9]/,
    'refusals by budget',
  );
  t.match(
    exported,
    /flowplan_recompute_duration_seconds_count\{where="thread"\} [1-9]/,
    'recomputes by where',
  );
  t.match(
    exported,
    /flowplan_recompute_duration_seconds_count\{where="incremental"\} [1-9]/,
    'incremental derivations',
  );
  t.match(exported, /flowplan_work_index_build_seconds_count [1-9]/, 'work-index rebuilds');
  t.match(
    exported,
    /flowplan_postgres_connections\{pool="flowplan",state="active"\} [1-9]/,
    'Postgres connections in use (the scrape itself is one)',
  );
});
