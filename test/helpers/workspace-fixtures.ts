/**
 * A workspace holding one of everything an id in a path can name, built through the API as
 * a client would, and a snapshot of everything its owner can see (every GET the OpenAPI
 * document lists, filled with those ids) plus digests of its stored rows: proof, compared
 * before and after, that nothing was written.
 */
import type { Test } from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { createKey } from '../../src/services/auth/provision.ts';
import { deliveriesSettled } from '../services/webhooks/receiver.ts';
import { createPerson, personToken } from './people.ts';
import { callsFor, operations, send, type IdMap } from './openapi-sweep.ts';
import { until, type TestServer } from './server.ts';
import type {
  Attachment,
  Baseline,
  Brainstorm,
  BrainstormShare,
  Comment,
  Flow,
  Invite,
  JsonDocument,
  Share,
  Task,
  TemplateList,
  WebhookDeliveryList,
  WebhookWithSecret,
} from './wire.ts';

export interface Furnished {
  workspaceId: string;
  /** An admin API key holding every scope. */
  key: string;
  /** The owner, signed in (a person token). */
  ownerId: string;
  ownerToken: string;
  ids: IdMap;
  /** Values for body and query fields by name (a URL the webhook check accepts, an existing account's email, the marker). */
  values: Record<string, unknown>;
}

let accounts = 0;

/**
 * Fills the workspace: a member, a webhook with a finished delivery, a flow with an
 * objective, a sub-task and a dependency, a comment, a file, a deliverable, a baseline, a share, a
 * brainstorm with two ideas, a comment and a file on one, a share, a pending invite, a flow
 * started from a template, and notification settings. Every name and text carries `marker`,
 * so a response that leaks any of it can be found by searching for the marker.
 */
export async function furnish(
  t: Test,
  s: TestServer,
  workspaceId: string,
  options: { marker: string; receiverUrl: string; guestEmail?: string },
): Promise<Furnished> {
  const { marker } = options;
  const { key } = await createKey(s.sql, {
    workspaceId,
    role: 'admin',
    scopes: [...SCOPES],
    name: `${marker} key`,
  });
  const account = async (role?: 'owner' | 'member') => {
    accounts++;
    const email = `${marker.toLowerCase()}-${accounts}@example.com`;
    const { id } = await createPerson(s.sql, {
      email,
      name: `${marker} person ${accounts}`,
      password: 'correct horse battery',
      ...(role ? { workspaceId, role } : {}),
    });
    return { id, email };
  };
  const { id: ownerId } = await account('owner');
  const ownerToken = await personToken(s, ownerId, workspaceId);
  const { id: memberId } = await account('member');
  // The account flows and boards are shared with: one of its own unless the test brings one.
  const guestEmail = options.guestEmail ?? (await account()).email;

  const call = async <T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    status = 201,
    raw?: Buffer,
  ) => {
    const res = await s.api<T>(
      method,
      path,
      raw ? { token: key, raw, headers: { 'content-type': 'text/plain' } } : { token: key, body },
    );
    if (res.status !== status)
      throw new Error(`fixture ${method} ${path} → ${res.status} ${res.text}`);
    return res.body;
  };

  const webhook = await call<WebhookWithSecret>('POST', '/v1/webhooks', {
    url: `${options.receiverUrl}/${marker}`,
    events: ['flow.created'],
    description: marker,
  });
  const flow = await call<Flow>('POST', '/v1/flows', {
    name: `${marker} flow`,
    description: marker,
    tasks: [
      { name: `${marker} design`, estimateHours: 8 },
      { name: `${marker} build`, after: [0] },
    ],
  });
  const [design, build] = flow.tasks.map((x) => x.id) as [string, string];
  const F = `/v1/flows/${flow.id}`;
  const sub = await call<Task>('POST', `${F}/tasks`, {
    name: `${marker} sub-task`,
    parentId: design,
  });
  const comment = await call<Comment>('POST', `${F}/tasks/${design}/comments`, {
    body: `${marker} comment`,
  });
  const file = await call<Attachment>(
    'POST',
    `${F}/tasks/${design}/attachments?name=${marker}.txt`,
    undefined,
    201,
    Buffer.from(`${marker} bytes`),
  );
  const deliverable = await call<Task['requiredDeliverables'][number]>(
    'POST',
    `${F}/tasks/${build}/deliverables`,
    {
      name: `${marker} deliverable`,
    },
  );
  const baseline = await call<Baseline>('POST', `${F}/baselines`, { name: `${marker} baseline` });
  const flowShare = await call<Share>('POST', `${F}/shares`, {
    email: guestEmail,
    role: 'commenter',
  });

  const board = await call<Brainstorm>('POST', '/v1/brainstorms', {
    name: `${marker} board`,
    ideas: [{ title: `${marker} idea` }, { title: `${marker} child`, parent: 0 }],
  });
  const [idea, child] = board.ideas.map((x) => x.id) as [string, string];
  const B = `/v1/brainstorms/${board.id}`;
  await call('POST', `${B}/ideas/${idea}/comments`, { body: `${marker} idea comment` });
  const ideaFile = await call<Attachment>(
    'POST',
    `${B}/ideas/${idea}/attachments?name=${marker}-idea.txt`,
    undefined,
    201,
    Buffer.from(`${marker} idea bytes`),
  );
  const boardShare = await call<BrainstormShare>('POST', `${B}/shares`, {
    email: guestEmail,
    role: 'commenter',
  });

  const invite = await call<Invite>('POST', '/v1/team/invites', {
    email: `${marker.toLowerCase()}-invitee@example.com`,
    role: 'member',
  });
  const templates = await call<TemplateList>('GET', '/v1/templates', undefined, 200);
  const [template] = templates.items.map((x) => x.id) as [string];
  await call('POST', `/v1/templates/${template}/flows`, { name: `${marker} from template` });
  // No digest is due while a test runs: its row would appear between two snapshots.
  for (const person of [ownerId, memberId])
    await call(
      'PATCH',
      `/v1/notifications/preferences?memberId=${person}`,
      { events: { digest: false } },
      200,
    );

  await deliveriesSettled(s.sql);
  const deliveries = await call<WebhookDeliveryList>(
    'GET',
    `/v1/webhooks/${webhook.id}/deliveries`,
    undefined,
    200,
  );
  t.ok(deliveries.items.length > 0, `${marker}: the webhook has a delivery`);

  return {
    workspaceId,
    key,
    ownerId,
    ownerToken,
    ids: {
      flowId: [flow.id],
      taskId: [build, design, sub.id],
      dependsOnId: [design],
      attachmentId: [file.id],
      commentId: [comment.id],
      deliverableId: [deliverable.id],
      baselineId: [baseline.id],
      memberId: [memberId, ownerId],
      assigneeId: [memberId],
      inviteId: [invite.id],
      templateId: [template],
      brainstormId: [board.id],
      ideaId: [idea, child],
      fileId: [ideaFile.id],
      shareId: [flowShare.id, boardShare.id],
      webhookId: [webhook.id],
      deliveryId: deliveries.items.slice(0, 1).map((x) => x.id),
    },
    values: {
      url: `${options.receiverUrl}/${marker}-sweep`,
      email: guestEmail,
      name: `${marker} sweep`,
      title: `${marker} sweep`,
      body: `${marker} sweep`,
      q: marker,
    },
  };
}

export interface Snapshot {
  api: Record<string, { status: number; body: unknown }>;
  rows: Record<string, { n: number; digest: string | null }>;
}

// Bookkeeping that any request writes (rate budgets) or that is keyed by credential, not workspace.
const UNSCOPED_SKIP = new Set(['rate_buckets', 'idempotency_keys', 'schema_migrations']);

/**
 * What the owner sees through every GET of the document (with the workspace's ids), and a
 * digest of every table's rows that belong to the workspace. Fields that say when the
 * answer was made (`generatedAt`) are left out.
 */
export async function snapshot(s: TestServer, doc: JsonDocument, w: Furnished): Promise<Snapshot> {
  const api: Snapshot['api'] = {};
  for (const op of operations(doc)) {
    // A stream never ends: what it would show is the feed's (GET /v1/events), which is read.
    if (op.method !== 'GET' || !op.authenticated || op.streams) continue;
    // Reads that default to today (a schedule, a what-if) read one fixed day instead: a sweep
    // that runs across midnight compares like with like. A forecast draws from a fixed seed.
    for (const call of callsFor(op, w.ids, w.values, w.ownerToken, false, {
      startDate: '2030-01-07',
      seed: '1',
    })) {
      const res = await send(s, call);
      api[call.url] = {
        status: res.status,
        body: res.body === undefined ? res.text : strip(res.body),
      };
    }
  }
  const rows: Snapshot['rows'] = {};
  const tables = await s.sql<{ table: string; columns: string[] }[]>`
    select table_name as table, array_agg(column_name::text) as columns from information_schema.columns
    where table_schema = 'public' group by table_name order by table_name`;
  for (const { table, columns } of tables) {
    const has = (c: string) => columns.includes(c);
    const ws = w.workspaceId;
    const where =
      table === 'workspaces'
        ? s.sql`where id = ${ws}`
        : has('workspace_id')
          ? s.sql`where workspace_id = ${ws}`
          : has('flow_id')
            ? s.sql`where flow_id in (select id from flows where workspace_id = ${ws})`
            : has('brainstorm_id')
              ? s.sql`where brainstorm_id in (select id from brainstorms where workspace_id = ${ws})`
              : has('webhook_id')
                ? s.sql`where webhook_id in (select id from webhooks where workspace_id = ${ws})`
                : null;
    if (!where && UNSCOPED_SKIP.has(table)) continue;
    const [row] = await s.sql<{ n: number; digest: string | null }[]>`
      select count(*)::int as n, ${where ? s.sql`md5(string_agg(t::text, '|' order by t::text))` : s.sql`null`} as digest
      from ${s.sql(table)} t ${where ?? s.sql``}`;
    rows[table] = row!;
  }
  return { api, rows };
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'generatedAt')
        .map(([k, v]) => [k, strip(v)]),
    );
  }
  return value;
}

/** A snapshot once background work (outbox, deliveries, mail) has stopped changing it: two in a row agree. */
export async function settledSnapshot(
  s: TestServer,
  doc: JsonDocument,
  w: Furnished,
): Promise<Snapshot> {
  let previous = JSON.stringify(await snapshot(s, doc, w));
  const settled = await until(
    async () => {
      const next = await snapshot(s, doc, w);
      const same = JSON.stringify(next) === previous;
      previous = JSON.stringify(next);
      return { same, next };
    },
    (r) => r.same,
  );
  return settled.next;
}
