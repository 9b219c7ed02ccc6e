/** Search across a workspace's flows and tasks and the template catalogue (spec §4). */
import type { Static } from '@sinclair/typebox';
import type { SearchQuery, SearchResultSchema } from '../../contract/search.schema.ts';
import type { Principal } from '../auth/principal.ts';
import { insufficientScope } from '../../platform/errors.ts';
import { SEARCH_TYPES, type SearchType } from '../../contract/vocabulary.ts';
import type { Sql } from '../../storage/db.ts';
import { searchHits, type SearchHit } from '../../storage/search.store.ts';
import { searchTerms } from './terms.ts';
import type { Page } from '../../platform/paging.ts';

function url(appUrl: string, hit: SearchHit): string {
  const id = encodeURIComponent(hit.id);
  switch (hit.type) {
    case 'flow':
      return `${appUrl}/flows/${id}`;
    case 'task':
      return `${appUrl}/flows/${encodeURIComponent(hit.flowId!)}/tasks/${id}`;
    case 'template':
      return `${appUrl}/templates/${id}`;
  }
}

/**
 * Templates are read under templates:read: a caller without it gets no template results
 * when searching everything, and INSUFFICIENT_SCOPE when asking for templates only.
 */
function typesFor(principal: Principal, type: SearchType | undefined): SearchType[] {
  const templates = principal.scopes.includes('templates:read');
  if (type === 'template' && !templates) {
    throw insufficientScope(['flows:read', 'templates:read'], ['templates:read']);
  }
  if (type) return [type];
  return SEARCH_TYPES.filter((t) => t !== 'template' || templates);
}

export interface SearchContext {
  sql: Sql;
  /** Where results link to (the web app's pages). */
  appUrl: string;
  principal: Principal;
}

export async function search(
  { sql, appUrl, principal }: SearchContext,
  query: Static<typeof SearchQuery>,
): Promise<Page<Static<typeof SearchResultSchema>>> {
  const types = typesFor(principal, query.type);
  const terms = searchTerms(query.q);
  if (!terms) return { total: 0, items: [] };
  const { total, hits } = await searchHits(sql, principal.workspaceId, terms, types, query.size);
  return {
    total,
    items: hits.map((hit) => ({
      id: hit.id,
      type: hit.type,
      title: hit.title,
      flowId: hit.flowId,
      url: url(appUrl, hit),
    })),
  };
}
