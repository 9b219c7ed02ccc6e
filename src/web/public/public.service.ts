/**
 * Published flows and brainstorms for the public views. Every request learns from Postgres
 * whether the token is published right now, by a look-up that started after the request
 * arrived (FreshLookups: concurrent requests share one, so a busy page costs one indexed query
 * per round trip, not one per request), so an unpublish or an archive in any process is seen
 * at the very next request; only then is the rendition served from a cache kept per version (the diagram
 * is drawn on the render pool once per version and day, since the projected finish moves
 * with the date).
 */
import { LRUCache } from 'lru-cache';
import { sha256 } from '../../services/auth/secrets.ts';
import { brainstormDiagramSvg, findPublishedBoard, publishedBrainstorm } from '../../services/brainstorms/public.service.ts';
import { diagramModel } from '../../services/exports/diagram.ts';
import type { RenderService } from '../../services/exports/render.service.ts';
import { findPublishedFlow, publishedSnapshot, type PublishedFlowRow } from '../../services/flows/published.service.ts';
import type { SessionRegistry } from '../../services/flows/registry.ts';
import { scheduleStart } from '../../services/flows/schedule.ts';
import type { Sql } from '../../platform/database.ts';
import { FreshLookups } from './fresh-lookups.ts';
import { brainstormRendition, flowRendition, type Rendition } from './public.views.ts';

/** Published tokens are 24 random bytes in base64url; anything else names nothing. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;
/** Bytes of renditions kept per kind: a 500-task flow's come to about 1.5 MB with their gzipped twins. */
const CACHE_BYTES = 64 * 1024 * 1024;

interface Entry {
  key: string;
  rendition: Promise<Rendition | null>;
  /** Known once the rendition is made; a placeholder until then. */
  bytes: number;
}

const newCache = () => new LRUCache<string, Entry>({ maxSize: CACHE_BYTES, sizeCalculation: (entry) => entry.bytes });

function sizeOf(rendition: Rendition): number {
  let bytes = 0;
  for (const encoded of Object.values(rendition)) bytes += (encoded.identity.body as Buffer).length + (encoded.gzip.body as Buffer).length;
  return bytes;
}

export interface PublicViewsDeps {
  sql: Sql;
  registry: SessionRegistry;
  render: RenderService;
}

export class PublicViews {
  private readonly flows = newCache();
  private readonly brainstorms = newCache();
  /** Keyed by the token's sha256. */
  private readonly flowRows: FreshLookups<PublishedFlowRow | null>;
  private readonly boardRows: FreshLookups<{ id: string; version: number } | null>;

  constructor(private readonly deps: PublicViewsDeps) {
    this.flowRows = new FreshLookups((hash) => findPublishedFlow(deps.sql, hash));
    this.boardRows = new FreshLookups((hash) => findPublishedBoard(deps.sql, hash));
  }

  /** The published flow's rendition, or null when the token names no published flow. */
  async flow(token: string): Promise<Rendition | null> {
    if (!TOKEN_SHAPE.test(token)) return null;
    const row = await this.flowRows.get(sha256(token));
    if (!row) return null;
    const start = scheduleStart(undefined);
    return this.cached(this.flows, row.id, `${row.version}|${start}|${token}`, async () => {
      const snapshot = await publishedSnapshot(this.deps.sql, this.deps.registry, row);
      // Unpublished, republished or archived since the look-up: never render under the old token.
      if (snapshot?.flow.publicToken !== token || snapshot.flow.archived) return null;
      const model = diagramModel(snapshot, start);
      return flowRendition(model, await this.deps.render.diagramSvg(model), token);
    });
  }

  /** The published brainstorm's rendition, or null. */
  async brainstorm(token: string): Promise<Rendition | null> {
    if (!TOKEN_SHAPE.test(token)) return null;
    const board = await this.boardRows.get(sha256(token));
    if (!board) return null;
    // The ideas are read only when this version is not drawn yet.
    return this.cached(this.brainstorms, board.id, `${board.version}|${token}`, async () => {
      const model = await publishedBrainstorm(this.deps.sql, token);
      return model && brainstormRendition(model, brainstormDiagramSvg(model), token);
    });
  }

  /** One rendering per key however many requests ask at once; a failed or empty one is not kept. */
  private cached(cache: LRUCache<string, Entry>, id: string, key: string, make: () => Promise<Rendition | null>): Promise<Rendition | null> {
    const hit = cache.get(id);
    if (hit?.key === key) return hit.rendition;
    const rendition = make();
    const entry: Entry = { key, rendition, bytes: 1 };
    cache.set(id, entry);
    const current = () => cache.peek(id) === entry;
    rendition.then((made) => {
      if (!current()) return;
      if (!made) return void cache.delete(id);
      // Counted at its real size now (lru-cache sizes a new value object; one over the whole budget is not kept).
      cache.set(id, { ...entry, bytes: sizeOf(made) });
    }, () => current() && cache.delete(id));
    return rendition;
  }
}
