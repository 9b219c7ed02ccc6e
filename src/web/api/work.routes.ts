/**
 * Work views across every live flow of the workspace (CONTRACT §3). A page is tagged by
 * what it shows (views.ts listTag), so a conditional poll answers 304 from memory while
 * flows it does not show change, and a repeated poll re-serializes nothing.
 */
import { DomainError } from '../../platform/errors.ts';
import { route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { ListView } from '../../services/work/flow-ranks.ts';
import { listTag, listView, overview, type PageQuery } from '../../services/work/views.ts';
import {
  MineQuery,
  OverviewSchema,
  WorkListSchema,
  WorkQuery,
} from '../../contract/work.schema.ts';
import type { Services } from '../deps.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export function workRoutes(services: Services): Route[] {
  const { work } = services;
  const read = { method: 'GET', auth: 'bearer', scopes: ['flows:read'], tags: ['Work'] } as const;
  // Part of the ETag header: the client's assigneeId is percent-encoded, so no character of it
  // (a CR LF, a quote) can end the header or add one, and two ids still make two keys.
  const pageKey = (view: string, q: PageQuery) =>
    `${view}:${encodeURIComponent(q.assigneeId ?? '')}:${q.size}:${q.from}`;

  /** Who `mine` is about: only a person token has assignments of its own. */
  const person = (ctx: { principal: Principal }) => {
    const userId = ctx.principal.userId;
    if (!userId) {
      throw new DomainError(
        'FORBIDDEN',
        'Only a person token has work of its own: use /v1/work/available?assigneeId=<memberId> instead',
        {
          use: '/v1/work/available?assigneeId=',
        },
      );
    }
    return userId;
  };

  const list = (view: ListView, summary: string, operationId: string): Route =>
    route({
      ...read,
      path: `/v1/work/${view}`,
      operationId,
      summary,
      query: view === 'mine' ? MineQuery : WorkQuery,
      responses: { 200: { description: 'A page of work items', schema: WorkListSchema } },
      etag: async (ctx) => {
        const query: PageQuery =
          view === 'mine' ? { ...ctx.query, assigneeId: person(ctx) } : ctx.query;
        return `${listTag(await work.get(ctx.principal.workspaceId), view, query)}.${pageKey(view, query)}`;
      },
      handler: async (ctx) => {
        const query: PageQuery =
          view === 'mine' ? { ...ctx.query, assigneeId: person(ctx) } : ctx.query;
        const index = await work.get(ctx.principal.workspaceId);
        const key = pageKey(view, query);
        const body = index.memo(`bytes:${key}`, () =>
          Buffer.from(JSON.stringify(listView(index, view, query))),
        );
        return {
          status: 200,
          body,
          contentType: JSON_TYPE,
          etag: `${listTag(index, view, query)}.${key}`,
        };
      },
    });

  return [
    list(
      'available',
      'Ready work, ranked; assigneeId filters to a member, or none for unassigned',
      'workAvailable',
    ),
    list('blocked', 'Blocked work with what holds it up, most-blocking first', 'workBlocked'),
    list('in-progress', 'Work in progress', 'workInProgress'),
    {
      ...list('mine', "A person token's own ready and in-progress work", 'workMine'),
      errors: ['FORBIDDEN'],
    },
    route({
      ...read,
      path: '/v1/work/overview',
      operationId: 'workOverview',
      summary: 'Counts, flows at a glance and the top blockers',
      responses: { 200: { description: 'Overview', schema: OverviewSchema } },
      etag: async (ctx) => `${(await work.get(ctx.principal.workspaceId)).tag}.overview`,
      handler: async (ctx) => {
        const index = await work.get(ctx.principal.workspaceId);
        const body = index.memo('bytes:overview', () =>
          Buffer.from(JSON.stringify(overview(index))),
        );
        return { status: 200, body, contentType: JSON_TYPE, etag: `${index.tag}.overview` };
      },
    }),
  ];
}
