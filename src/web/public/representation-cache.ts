/**
 * Published flows and brainstorms for the public views. Every request learns from Postgres
 * whether the token is published right now, by a look-up that started after the request
 * arrived (FreshLookups: concurrent requests share one, so a busy page costs one indexed query
 * per round trip, not one per request), so an unpublish or an archive in any process is seen
 * at the very next request; only then is the representation served from a cache kept per version.
 * The JSON document is built from the snapshot alone, never drawn; the page, embed and SVG are
 * drawn (on the render pool) when first asked for, once per version and day, since the
 * projected finish moves with the date.
 */
import { LRUCache } from 'lru-cache';
import { sha256 } from '../../services/auth/secrets.ts';
import {
  brainstormDiagramSvg,
  findPublishedBoard,
  publishedBrainstorm,
} from '../../services/brainstorms/public.service.ts';
import { diagramModel } from '../../services/exports/diagram.ts';
import type { RenderService } from '../../services/exports/render.service.ts';
import {
  findPublishedFlow,
  publishedSnapshot,
  type PublishedFlowRow,
} from '../../services/flows/published.service.ts';
import { finishP80 } from '../../services/flows/forecast.ts';
import type { RecomputePool } from '../../services/flows/recompute-pool.ts';
import type { SessionRegistry } from '../../services/flows/registry.ts';
import { scheduleStart } from '../../services/flows/schedule.ts';
import type { Sql } from '../../platform/database.ts';
import { FreshLookups } from './fresh-lookups.ts';
import {
  brainstormDrawing,
  flowDrawing,
  jsonReply,
  publicBrainstormDocument,
  publicFlowDocument,
  type Drawing,
  type Encoded,
} from './public.views.ts';

/** Published tokens are 24 random bytes in base64url; anything else names nothing. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;
/** Bytes of representations kept per kind: a 500-task flow's come to about 1.5 MB with their gzipped twins. */
const CACHE_BYTES = 64 * 1024 * 1024;

/** A public address's part: the JSON document, or one of the drawn representations. */
export type Part = 'json' | keyof Drawing;

/** One published thing at one version: its JSON document, and its drawing once asked for. */
interface Published {
  json: Encoded;
  draw: () => Promise<Drawing>;
  drawing: Promise<Drawing> | null;
}

interface Entry {
  key: string;
  published: Promise<Published | null>;
  /** Known once the representations are made; a placeholder until then. */
  bytes: number;
}

const newCache = () =>
  new LRUCache<string, Entry>({ maxSize: CACHE_BYTES, sizeCalculation: (entry) => entry.bytes });

const bytesOf = (encoded: Encoded) =>
  (encoded.identity.body as Buffer).length + (encoded.gzip.body as Buffer).length;

export interface RepresentationCacheDeps {
  sql: Sql;
  registry: SessionRegistry;
  render: RenderService;
  pool: RecomputePool;
}

export class RepresentationCache {
  private readonly flows = newCache();
  private readonly brainstorms = newCache();
  /** Keyed by the token's sha256. */
  private readonly flowRows: FreshLookups<PublishedFlowRow | null>;
  private readonly boardRows: FreshLookups<{ id: string; version: number } | null>;

  constructor(private readonly deps: RepresentationCacheDeps) {
    this.flowRows = new FreshLookups((hash) => findPublishedFlow(deps.sql, hash));
    this.boardRows = new FreshLookups((hash) => findPublishedBoard(deps.sql, hash));
  }

  /** A part of the published flow, or null when the token names no published flow. */
  async flow(token: string, part: Part): Promise<Encoded | null> {
    if (!TOKEN_SHAPE.test(token)) return null;
    const row = await this.flowRows.get(sha256(token));
    if (!row) return null;
    const start = scheduleStart(undefined);
    return this.part(this.flows, row.id, `${row.version}|${start}|${token}`, part, async () => {
      const snapshot = await publishedSnapshot(this.deps.sql, this.deps.registry, row);
      // Unpublished, republished or archived since the look-up: never show it under the old token.
      if (snapshot?.flow.publicToken !== token || snapshot.flow.archived) return null;
      const model = diagramModel(snapshot, start, await finishP80(this.deps.pool, snapshot, start));
      return {
        json: await jsonReply(publicFlowDocument(model)),
        draw: async () => flowDrawing(model, await this.deps.render.diagramSvg(model), token),
        drawing: null,
      };
    });
  }

  /** A part of the published brainstorm, or null. */
  async brainstorm(token: string, part: Part): Promise<Encoded | null> {
    if (!TOKEN_SHAPE.test(token)) return null;
    const board = await this.boardRows.get(sha256(token));
    if (!board) return null;
    // The ideas are read only when this version is not cached yet.
    return this.part(this.brainstorms, board.id, `${board.version}|${token}`, part, async () => {
      const model = await publishedBrainstorm(this.deps.sql, token);
      return (
        model && {
          json: await jsonReply(publicBrainstormDocument(model)),
          draw: () => brainstormDrawing(model, brainstormDiagramSvg(model), token),
          drawing: null,
        }
      );
    });
  }

  /**
   * The part asked for, from one making per key however many requests ask at once; a failed
   * or empty one is not kept, nor a failed drawing (the next request draws again).
   */
  private async part(
    cache: LRUCache<string, Entry>,
    id: string,
    key: string,
    part: Part,
    make: () => Promise<Published | null>,
  ): Promise<Encoded | null> {
    const published = await this.published(cache, id, key, make);
    if (!published) return null;
    if (part === 'json') return published.json;
    if (!published.drawing) {
      const drawing = (published.drawing = published.draw());
      drawing.then(
        (drawn) => {
          // Counted at its real size now (lru-cache sizes a new value object; one over the whole budget is not kept).
          const entry = cache.peek(id);
          if (entry?.key === key)
            cache.set(id, {
              ...entry,
              bytes: entry.bytes + bytesOf(drawn.page) + bytesOf(drawn.embed) + bytesOf(drawn.svg),
            });
        },
        () => {
          if (published.drawing === drawing) published.drawing = null;
        },
      );
    }
    return (await published.drawing)[part];
  }

  private published(
    cache: LRUCache<string, Entry>,
    id: string,
    key: string,
    make: () => Promise<Published | null>,
  ): Promise<Published | null> {
    const hit = cache.get(id);
    if (hit?.key === key) return hit.published;
    const published = make();
    const entry: Entry = { key, published, bytes: 1 };
    cache.set(id, entry);
    const current = () => cache.peek(id) === entry;
    published.then(
      (made) => {
        if (!current()) return;
        if (!made) return void cache.delete(id);
        cache.set(id, { ...entry, bytes: bytesOf(made.json) });
      },
      () => current() && cache.delete(id),
    );
    return published;
  }
}
