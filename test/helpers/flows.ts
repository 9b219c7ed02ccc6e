/**
 * Helpers shared by the flow and task tests: a server with a rate limit high enough for a
 * test file's traffic, people to assign, and "nothing was written" checks that compare
 * everything a client can see (the flow, both flow lists) plus the stored row counts.
 */
import type { Test } from 'tap';
import type { Overrides } from '../../src/platform/config.ts';
import { startTestServer, type TestServer } from './server.ts';
import type { Flow } from './wire.ts';
import { createPerson } from './people.ts';

let people = 0;

export async function startFlowServer(t: Test, overrides: Overrides = {}): Promise<TestServer> {
  return startTestServer(t, {
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
    ...overrides,
  });
}

/** A person who is a member of the workspace (their id is the member id). */
export async function member(
  s: TestServer,
  name: string,
  workspaceId = s.workspaceId,
): Promise<string> {
  people++;
  const { id } = await createPerson(s.sql, {
    email: `p${people}.${Date.now()}@example.com`,
    name,
    password: 'correct horse battery',
    workspaceId,
  });
  return id;
}

/** POST /v1/flows that must succeed; the new Flow. */
export async function newFlow(
  t: Test,
  s: TestServer,
  body: Record<string, unknown>,
  token = s.adminKey,
): Promise<Flow> {
  const res = await s.api<Flow>('POST', '/v1/flows', { token, body });
  t.equal(res.status, 201, `created flow ${String(body.name)}`);
  if (res.status !== 201) throw new Error(`flow creation failed: ${res.text}`);
  return res.body;
}

/** A request that must answer `status`; the body, read as `T` (the operation's schema type). */
export async function ok<T = unknown>(
  t: Test,
  s: TestServer,
  method: string,
  path: string,
  body?: unknown,
  status = 200,
  token = s.adminKey,
): Promise<T> {
  const res = await s.api<T>(method, path, { token, body });
  t.equal(res.status, status, `${method} ${path} → ${status}`);
  if (res.status !== status) t.comment(res.text);
  return res.body;
}

/** Task ids of a flow by name. */
export function idsByName(flow: { tasks: { id: string; name: string }[] }): Record<string, string> {
  return Object.fromEntries(flow.tasks.map((task) => [task.name, task.id]));
}

/** A flow's task id by name; an unknown name fails the test that asked. */
export function taskIdOf(flow: {
  tasks: { id: string; name: string }[];
}): (name: string) => string {
  const ids = idsByName(flow);
  return (name) => {
    const id = ids[name];
    if (id === undefined) throw new Error(`no task ${name}`);
    return id;
  };
}

export function taskNamed<T extends { name: string }>(flow: { tasks: T[] }, name: string): T {
  const task = flow.tasks.find((x) => x.name === name);
  if (!task) throw new Error(`no task ${name}`);
  return task;
}

export interface Visible {
  flows: Record<string, { status: number; etag: string | null; body: unknown }>;
  live: unknown;
  archived: unknown;
  rows: Record<string, number>;
}

const TABLES = [
  'flows',
  'tasks',
  'task_dependencies',
  'deliverables',
  'attachments',
  'comments',
  'baselines',
  'outbox',
] as const;

/** Everything a client sees of these flows and the workspace's lists, plus stored row counts. */
export async function visible(
  s: TestServer,
  flowIds: string[],
  token = s.adminKey,
): Promise<Visible> {
  const flows: Visible['flows'] = {};
  for (const id of flowIds) {
    const res = await s.api('GET', `/v1/flows/${id}`, { token });
    flows[id] = { status: res.status, etag: res.headers.get('etag'), body: res.body };
  }
  const live = (await s.api('GET', '/v1/flows?size=100', { token })).body;
  const archived = (await s.api('GET', '/v1/flows?archived=true&size=100', { token })).body;
  const rows: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await s.sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`);
    rows[table] = row!.n;
  }
  return { flows, live, archived, rows };
}

/** Asserts nothing visible or stored changed since `before`. */
export async function assertUnchanged(
  t: Test,
  s: TestServer,
  before: Visible,
  what: string,
  token = s.adminKey,
): Promise<void> {
  const after = await visible(s, Object.keys(before.flows), token);
  t.strictSame(after, before, `nothing written: ${what}`);
}
