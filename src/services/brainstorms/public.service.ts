/**
 * The public face of a published brainstorm: titles, tree position and tags only (spec §1
 * rule 8: never an assignee, comment, file or note), read from Postgres on every call so an
 * unpublish is seen by every process at once, and drawn as an SVG idea tree.
 */
import type { Static } from '@sinclair/typebox';
import type { PublicBrainstormSchema } from '../../contract/public.schema.ts';
import { sha256 } from '../auth/secrets.ts';
import { html, type Html } from '../../platform/html.ts';
import type { Sql } from '../../storage/db.ts';
import { publicIdeas, publishedBoard } from '../../storage/brainstorms.store.ts';

type PublicIdea = Static<typeof PublicBrainstormSchema>['ideas'][number];

/** The published document, with what the views are keyed by. */
export interface PublicBrainstorm extends Static<typeof PublicBrainstormSchema> {
  id: string;
  /**
   * Moves with every change the public sees (name, titles, tags, tree) and with nothing else,
   * so the public views' ETags, seeded from it, reveal nothing of notes, comments or files.
   */
  version: number;
}

/** Published tokens are 24 random bytes in base64url; anything else names nothing. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;

/**
 * The board published under `token`, or null. Matched by the token's hash, so the look-up
 * reveals nothing about how close a guess came.
 */
/** The board published under the token whose sha256 is `tokenHash`, with its version, or null. */
export async function findPublishedBoard(
  sql: Sql,
  tokenHash: string,
): Promise<{ id: string; version: number } | null> {
  const board = await publishedBoard(sql, tokenHash);
  return board && { id: board.id, version: board.version };
}

export async function publishedBrainstorm(
  sql: Sql,
  token: string,
): Promise<PublicBrainstorm | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  // One snapshot for the board and its ideas, so the version matches what is drawn.
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const board = await publishedBoard(tx, sha256(token));
    if (!board) return null;
    // The workspace routes the read of its ideas; the public never sees it.
    const { workspaceId, ...shown } = board;
    return { ...shown, ideas: await publicIdeas(tx, workspaceId, board.id) };
  });
}

const BOX_WIDTH = 200;
const BOX_HEIGHT = 64;
const GAP_X = 24;
const GAP_Y = 48;
const MARGIN = 16;
const LINE_CHARS = 28;

interface Placed {
  idea: PublicIdea;
  x: number;
  y: number;
}

/**
 * Tidy-tree positions: leaves take consecutive columns, a parent sits centred over its
 * children, depth is the row. Iterative, so a chain of thousands of ideas cannot overflow the stack.
 */
function layout(ideas: readonly PublicIdea[]): { placed: Placed[]; columns: number; rows: number } {
  const ids = new Set(ideas.map((i) => i.id));
  const children = new Map<string | null, PublicIdea[]>();
  for (const idea of ideas) {
    const parent = idea.parentId !== null && ids.has(idea.parentId) ? idea.parentId : null;
    const list = children.get(parent);
    if (list) list.push(idea);
    else children.set(parent, [idea]);
  }
  const column = new Map<string, number>();
  const depth = new Map<string, number>();
  let nextColumn = 0;
  let rows = 0;
  const stack: { idea: PublicIdea; level: number; visited: boolean }[] = (children.get(null) ?? [])
    .slice()
    .reverse()
    .map((idea) => ({ idea, level: 0, visited: false }));
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const kids = children.get(top.idea.id) ?? [];
    if (!top.visited) {
      top.visited = true;
      depth.set(top.idea.id, top.level);
      rows = Math.max(rows, top.level + 1);
      for (let i = kids.length - 1; i >= 0; i--)
        stack.push({ idea: kids[i]!, level: top.level + 1, visited: false });
      continue;
    }
    stack.pop();
    column.set(
      top.idea.id,
      kids.length === 0
        ? nextColumn++
        : (column.get(kids[0]!.id)! + column.get(kids[kids.length - 1]!.id)!) / 2,
    );
  }
  const placed = ideas
    .filter((i) => column.has(i.id))
    .map((idea) => ({
      idea,
      x: MARGIN + column.get(idea.id)! * (BOX_WIDTH + GAP_X),
      y: MARGIN + depth.get(idea.id)! * (BOX_HEIGHT + GAP_Y),
    }));
  return { placed, columns: nextColumn, rows };
}

/** Up to `lines` lines of at most LINE_CHARS characters, the last ending in … when cut. */
function wrap(text: string, lines: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let rest = Array.from(word);
    while (rest.length > 0) {
      const room = LINE_CHARS - (line ? Array.from(line).length + 1 : 0);
      if (rest.length <= room) {
        line = line ? `${line} ${rest.join('')}` : rest.join('');
        rest = [];
      } else if (line) {
        out.push(line);
        line = '';
      } else {
        out.push(rest.slice(0, LINE_CHARS).join(''));
        rest = rest.slice(LINE_CHARS);
      }
    }
  }
  if (line) out.push(line);
  if (out.length <= lines) return out;
  const last = Array.from(out[lines - 1]!)
    .slice(0, LINE_CHARS - 1)
    .join('');
  return [...out.slice(0, lines - 1), `${last}…`];
}

function box({ idea, x, y }: Placed): Html {
  const title = wrap(idea.title, 2);
  const tags = idea.tags.length > 0 ? wrap(idea.tags.map((t) => `#${t}`).join(' '), 1)[0]! : '';
  const label = idea.tags.length > 0 ? `${idea.title} (${idea.tags.join(', ')})` : idea.title;
  return html`<g class="idea"><title>${label}</title>
<rect x="${x}" y="${y}" width="${BOX_WIDTH}" height="${BOX_HEIGHT}" rx="8" fill="#ffffff" stroke="#4a5568" stroke-width="1.5"/>
${title.map((line, i) => html`<text class="idea-title" x="${x + 10}" y="${y + 22 + i * 16}" font-size="13" fill="#1a202c">${line}</text>`)}
${tags ? html`<text class="idea-tags" x="${x + 10}" y="${y + BOX_HEIGHT - 10}" font-size="11" fill="#2b6cb0">${tags}</text>` : ''}</g>
`;
}

/** The idea tree as a standalone SVG document (also fit to be inlined in a page). */
export function brainstormDiagramSvg(model: PublicBrainstorm): string {
  const { placed, columns, rows } = layout(model.ideas);
  const width = Math.max(columns, 1) * (BOX_WIDTH + GAP_X) - GAP_X + 2 * MARGIN;
  const height = Math.max(rows, 1) * (BOX_HEIGHT + GAP_Y) - GAP_Y + 2 * MARGIN;
  const at = new Map(placed.map((p) => [p.idea.id, p]));
  const links = placed.flatMap(({ idea, x, y }) => {
    const parent = idea.parentId === null ? undefined : at.get(idea.parentId);
    if (!parent) return [];
    return [
      html`<line class="link" x1="${parent.x + BOX_WIDTH / 2}" y1="${parent.y + BOX_HEIGHT}" x2="${x + BOX_WIDTH / 2}" y2="${y}" stroke="#a0aec0" stroke-width="1.5"/>`,
    ];
  });
  const empty =
    placed.length === 0
      ? html`<text x="${MARGIN}" y="${MARGIN + 36}" font-size="14" fill="#4a5568">No ideas yet</text>`
      : '';
  return html`<svg xmlns="http://www.w3.org/2000/svg" class="fp-brainstorm" role="img" aria-labelledby="brainstorm-title" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Verdana, sans-serif">
<title id="brainstorm-title">${model.name}: idea tree of ${model.ideas.length} ideas</title>
${links}${placed.map(box)}${empty}</svg>
`.toString();
}
