/** GET /v1/search (spec §4): flows, tasks and templates by relevance. */
import { json, route, type Route } from '../http/route.ts';
import { listOf } from '../../contract/common.schema.ts';
import { SearchQuery, SearchResultSchema } from '../../contract/search.schema.ts';
import { search } from '../../services/search/search.service.ts';
import type { Services } from '../deps.ts';

export function searchRoutes(services: Services): Route[] {
  const { sql, config } = services;
  return [
    route({
      method: 'GET',
      path: '/v1/search',
      operationId: 'search',
      tags: ['Search'],
      summary:
        'Find live flows (name, description), their tasks (name) and templates, most relevant first',
      auth: 'bearer',
      scopes: ['flows:read'],
      query: SearchQuery,
      errors: ['VALIDATION_FAILED', 'INSUFFICIENT_SCOPE'],
      responses: {
        200: {
          description: 'Matches, most relevant first; total counts every match',
          schema: listOf(SearchResultSchema),
        },
      },
      handler: async (ctx) =>
        json(
          200,
          await search({ sql, appUrl: config.appUrl, principal: ctx.principal }, ctx.query),
        ),
    }),
  ];
}
