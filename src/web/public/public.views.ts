/**
 * What a published flow or brainstorm looks like to anyone with the link: the page, the
 * embed, the JSON document and the SVG, built once per version from public-safe models only
 * (the exports' DiagramModel, the brainstorms' PublicBrainstorm), so no assignee, comment,
 * file, note or description can reach a byte of them. Relative links keep every address
 * under whatever `{public_url}` the pages are served at.
 */
import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type { PublicBrainstormSchema, PublicFlowSchema } from '../../contract/public.schema.ts';
import type { DiagramModel } from '../../services/exports/diagram.ts';
import { hoursText, rangeText } from '../../services/exports/hours.ts';
import { html, trusted, type Html } from '../../platform/html.ts';
import { page } from '../http/page.ts';
import type { Reply } from '../http/route.ts';
import type { PublicBrainstorm } from '../../services/brainstorms/public.service.ts';

/** A representation as is and gzipped (a 500-task page is ~300 KB of markup, ~10% of it gzipped). */
export interface Encoded {
  identity: Reply;
  gzip: Reply;
}

/** The drawn representations of one published thing at one version (its JSON needs no drawing). */
export interface Drawing {
  page: Encoded;
  embed: Encoded;
  svg: Encoded;
}

/** The JSON document as served. */
export const jsonReply = (document: Record<string, unknown>): Promise<Encoded> =>
  bytesReply(Buffer.from(JSON.stringify(document)), 'application/json; charset=utf-8');

/** Public representations always revalidate: after an unpublish the next request is a 404. */
const REVALIDATE = 'no-cache';
const COMMON = { 'Cache-Control': REVALIDATE, 'Referrer-Policy': 'no-referrer' };

const tagOf = (bytes: Buffer) => hash('sha1', bytes, 'base64url');
const gzipped = promisify(gzip);

/**
 * Compressed once per version, in libuv's thread pool (a 5,000-task page is megabytes: never
 * on the event loop); each encoding has its own strong ETag.
 */
async function encoded(reply: Reply): Promise<Encoded> {
  const bytes = reply.body as Buffer;
  const headers = { ...reply.headers, Vary: 'Accept-Encoding' };
  const tag = tagOf(bytes);
  return {
    identity: { ...reply, headers, etag: tag },
    gzip: {
      ...reply,
      body: await gzipped(bytes),
      headers: { ...headers, 'Content-Encoding': 'gzip' },
      etag: `${tag}.gz`,
    },
  };
}

function bytesReply(
  bytes: Buffer,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Encoded> {
  return encoded({ status: 200, body: bytes, contentType, headers: { ...COMMON, ...headers } });
}

/** An HTML page in the page frame, revalidating. */
const htmlReply = (input: Parameters<typeof page>[0]): Promise<Encoded> =>
  encoded(page({ ...input, cacheControl: REVALIDATE }));

const STATUS_TEXT: Record<DiagramModel['tasks'][number]['status'], string> = {
  blocked: 'Blocked',
  ready: 'Ready',
  in_progress: 'In progress',
  done: 'Done',
};

const day = (value: string | null) => (value ? value.slice(0, 10) : null);

/** The JSON document of a published flow (PublicFlowSchema). */
export function publicFlowDocument(model: DiagramModel): Static<typeof PublicFlowSchema> {
  return {
    name: model.flowName,
    dueDate: model.dueDate,
    projectedFinish: model.projectedFinish,
    onTrack: model.onTrack,
    finishP80: model.finishP80,
    tasks: model.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      status: task.status,
      estimateHours: task.estimateHours,
      estimateRange: task.estimateRange,
      critical: task.critical,
      dependsOn: task.dependsOn.map((i) => model.tasks[i]!.id),
    })),
  };
}

function verdict(model: DiagramModel): Html {
  if (model.onTrack === null)
    return html`<dd>${model.dueDate ? 'Nothing left to schedule' : 'No due date'}</dd>`;
  return model.onTrack
    ? html`<dd class="verdict-on-track">On track</dd>`
    : html`<dd class="verdict-late">Late: finishes after the due date</dd>`;
}

/** Due date, projected finish, 80% date, verdict and progress: the public page's and the app's. */
export function flowFacts(model: DiagramModel): Html {
  const done = model.tasks.filter((t) => t.status === 'done').length;
  return html`<dl class="facts">
<div><dt>Due date</dt><dd>${day(model.dueDate) ?? 'None'}</dd></div>
<div><dt>Projected finish</dt><dd>${day(model.projectedFinish) ?? (model.tasks.length > done ? 'Not scheduled' : 'Everything is done')}</dd></div>
${
  model.finishP80
    ? html`<div><dt>80% sure by</dt><dd>${model.finishP80}</dd></div>
`
    : ''
}<div><dt>Verdict</dt>${verdict(model)}</div>
<div><dt>Tasks done</dt><dd>${done} of ${model.tasks.length}</dd></div>
</dl>`;
}

/** Narrower than this, a diagram fits a phone as it is: no full-size control. */
const FITS_ANY_SCREEN = 360;

/**
 * The diagram in its own box, shrunk to the box's width so no part of a wide one is hidden;
 * `zoom` adds the control that shows it at full size, scrolling inside the box (a details
 * toggle: no script needed). The page never scrolls sideways.
 */
export function diagramBox(svg: string, label: string, zoom: boolean): Html {
  const width = Number(/ width="([\d.]+)"/.exec(svg)?.[1] ?? 0);
  const control =
    zoom && width > FITS_ANY_SCREEN
      ? html`<details class="zoom"><summary>Show at full size (${Math.round(width)} px wide: scroll inside the box)</summary></details>
`
      : '';
  return html`${control}<div class="diagram" role="region" tabindex="0" aria-label="${label}">${trusted(svg)}</div>`;
}

function taskList(model: DiagramModel): Html {
  if (model.tasks.length === 0) return html`<p>This flow has no tasks yet.</p>`;
  // <bdi>: a right-to-left name keeps its own direction without turning the words around it.
  return html`<ol class="task-list">${model.tasks.map(
    (task) => html`<li${task.critical ? html` class="critical"` : ''}><bdi>${task.name}</bdi>
<span class="muted">· ${STATUS_TEXT[task.status]} · ${hoursText(task.estimateHours)}${task.estimateRange ? ` (${rangeText(task.estimateRange)})` : ''}${task.critical ? ' · critical path' : ''}${task.dependsOn.length > 0 ? html` · after ${task.dependsOn.map((i, n) => html`${n > 0 ? ', ' : ''}<bdi>${model.tasks[i]!.name}</bdi>`)}` : ''}</span></li>`,
  )}</ol>`;
}

export async function flowDrawing(
  model: DiagramModel,
  svg: string,
  token: string,
): Promise<Drawing> {
  const title = model.flowName;
  const label = `Dependency diagram of ${title}`;
  const pageBody = html`<h1>${title}</h1>
${flowFacts(model)}
<section aria-labelledby="diagram-heading"><h2 id="diagram-heading">Dependency diagram</h2>
<p class="muted">Thick red borders mark the critical path: the tasks that decide the finish date.</p>
${diagramBox(svg, label, true)}</section>
<section aria-labelledby="tasks-heading"><h2 id="tasks-heading">Tasks</h2>${taskList(model)}</section>
<p><a href="${token}.json">This flow as JSON</a> · <a href="${token}/diagram.svg">The diagram as SVG</a></p>`;
  const embedBody = html`<h1><a href="../../flows/${token}" target="_blank" rel="noopener">${title}</a></h1>
${flowFacts(model)}
${diagramBox(svg, label, false)}`;
  const [pageReply, embed, image] = await Promise.all([
    htmlReply({
      title: `${title} · flowplan`,
      body: pageBody,
      head: html`<link rel="alternate" type="application/json" href="${token}.json">`,
    }),
    htmlReply({
      title: `${title} · flowplan`,
      body: embedBody,
      chrome: 'minimal',
      frameAncestors: '*',
    }),
    bytesReply(Buffer.from(svg), 'image/svg+xml; charset=utf-8', {
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    }),
  ]);
  return { page: pageReply, embed, svg: image };
}

/** The JSON document of a published brainstorm (PublicBrainstormSchema). */
export function publicBrainstormDocument(
  model: PublicBrainstorm,
): Static<typeof PublicBrainstormSchema> {
  return {
    name: model.name,
    ideas: model.ideas.map((idea) => ({
      id: idea.id,
      title: idea.title,
      tags: idea.tags,
      parentId: idea.parentId,
    })),
  };
}

function ideaList(model: PublicBrainstorm): Html {
  if (model.ideas.length === 0) return html`<p>No ideas yet.</p>`;
  const titles = new Map(model.ideas.map((idea) => [idea.id, idea.title]));
  return html`<ul class="task-list">${model.ideas.map((idea) => {
    const parent = idea.parentId === null ? undefined : titles.get(idea.parentId);
    return html`<li>${idea.title}${parent !== undefined ? html` <span class="muted">· under ${parent}</span>` : ''}
${idea.tags.map((tag) => html` <span class="tag">#${tag}</span>`)}</li>`;
  })}</ul>`;
}

export async function brainstormDrawing(
  model: PublicBrainstorm,
  svg: string,
  token: string,
): Promise<Drawing> {
  const title = model.name;
  const label = `Idea tree of ${title}`;
  const pageBody = html`<h1>${title}</h1>
<section aria-labelledby="tree-heading"><h2 id="tree-heading">Idea tree</h2>${diagramBox(svg, label, true)}</section>
<section aria-labelledby="ideas-heading"><h2 id="ideas-heading">Ideas</h2>${ideaList(model)}</section>
<p><a href="${token}.json">This brainstorm as JSON</a> · <a href="${token}/diagram.svg">The tree as SVG</a></p>`;
  const embedBody = html`<h1><a href="../../brainstorms/${token}" target="_blank" rel="noopener">${title}</a></h1>
${diagramBox(svg, label, false)}`;
  const [pageReply, embed, image] = await Promise.all([
    htmlReply({
      title: `${title} · flowplan`,
      body: pageBody,
      head: html`<link rel="alternate" type="application/json" href="${token}.json">`,
    }),
    htmlReply({
      title: `${title} · flowplan`,
      body: embedBody,
      chrome: 'minimal',
      frameAncestors: '*',
    }),
    bytesReply(Buffer.from(svg), 'image/svg+xml; charset=utf-8', {
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    }),
  ]);
  return { page: pageReply, embed, svg: image };
}
