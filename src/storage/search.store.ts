/**
 * Search over a workspace's live flows (name, description), their tasks (name) and the
 * templates table (name, description, category): Postgres full-text search with prefix
 * terms, plus trigram word similarity on names so near spellings still match. The
 * to_tsvector expressions repeat those of the indexes in sql/0004 verbatim.
 */
import type postgres from 'postgres';
import type { SearchType } from '../contract/vocabulary.ts';
import type { Sql } from './db.ts';
import { pageOf } from './paging.ts';

type Fragment = postgres.Fragment;

const SIMILARITY = 0.4;

export interface SearchTerms {
  /** `word:* & word:*` over sanitized words only (letters, marks, digits): never a syntax error. */
  tsquery: string;
  /** The sanitized words joined by spaces, for trigram similarity. */
  words: string;
  /** The query as typed, trimmed and with single spaces, for exact and prefix title matches. */
  phrase: string;
}

export interface SearchHit {
  type: SearchType;
  id: string;
  title: string;
  flowId: string | null;
}

/**
 * Ranked: a title equal to the query, then one starting with it, then one whose words
 * match, each tier ordered by text rank plus similarity; ties by type, title and id.
 * `total` counts every match.
 */
export async function searchHits(
  pool: Sql,
  workspaceId: string,
  terms: SearchTerms,
  types: readonly SearchType[],
  size: number,
): Promise<{ total: number; hits: SearchHit[] }> {
  if (types.length === 0) return { total: 0, hits: [] };
  return pool.begin('read only', async (sql) => {
    // Near spellings: a whole-word trigram match (`<<%`, GIN-indexed) at this similarity or
    // more. 0.4 lets "relase" find "Release" and "lunch plan" find "Launch plan", yet not
    // "test" find "Best"; set for this transaction only, so no other query sees it.
    await sql`select set_config('pg_trgm.strict_word_similarity_threshold', ${String(SIMILARITY)}, true)`;
    const query = sql`to_tsquery('simple', ${terms.tsquery})`;
    const phrase = sql`lower(${terms.phrase}::text)`;
    const near = (title: Fragment) => sql`${terms.words}::text <<% ${title}`;
    const score = (title: Fragment, document: Fragment) => sql`
        case when lower(${title}) = ${phrase} then 4 when starts_with(lower(${title}), ${phrase}) then 2 else 0 end
        + case when to_tsvector('simple', ${title}) @@ ${query} then 1 else 0 end
        + ts_rank(${document}, ${query}) + strict_word_similarity(${terms.words}::text, ${title})`;

    const branches: Fragment[] = [];
    if (types.includes('flow')) {
      const [title, document] = [
        sql`f.name`,
        sql`to_tsvector('simple', f.name || ' ' || coalesce(f.description, ''))`,
      ];
      branches.push(sql`select 'flow'::text as type, 0 as type_order, f.id, f.name as title, f.id as flow_id,
          ${score(title, document)} as score
        from flows f
        where f.workspace_id = ${workspaceId} and not f.archived and (${document} @@ ${query} or ${near(title)})`);
    }
    if (types.includes('task')) {
      const [title, document] = [sql`t.name`, sql`to_tsvector('simple', t.name)`];
      branches.push(sql`select 'task'::text as type, 1 as type_order, t.id, t.name as title, t.flow_id,
          ${score(title, document)} as score
        from tasks t join flows f on f.id = t.flow_id and f.workspace_id = t.workspace_id
        where f.workspace_id = ${workspaceId} and not f.archived and (${document} @@ ${query} or ${near(title)})`);
    }
    if (types.includes('template')) {
      const [title, document] = [
        sql`p.name`,
        sql`to_tsvector('simple', p.name || ' ' || coalesce(p.description, '') || ' ' || coalesce(p.category, ''))`,
      ];
      branches.push(sql`select 'template'::text as type, 2 as type_order, p.id, p.name as title, null::text as flow_id,
          ${score(title, document)} as score
        from templates p
        where ${document} @@ ${query} or ${near(title)}`);
    }
    const union = branches
      .slice(1)
      .reduce((all, branch) => sql`${all} union all ${branch}`, branches[0]!);
    const { total, items } = await pageOf<SearchHit>(
      sql,
      {
        columns: sql`type, id, title, flow_id`,
        source: sql`from (${union}) hits`,
        order: sql`score desc, type_order, lower(title), id`,
      },
      { size, from: 0 },
    );
    return { total, hits: items };
  });
}
