/**
 * The flows a person can read and each flow's page, where its work moves: Start, Complete,
 * Reopen, Assign to me and Comment are form posts (CSRF-checked) run through the same
 * services, with the same principal and rules, as the API's routes; each answers by redirect
 * to the page with a message (POST/redirect/GET), a refusal's reason in words. The flow page
 * revalidates by ETag (its version, the day, the person), and a small optional script asks
 * for it again now and then, reloading when it changed.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { DomainError, notFound } from '../../platform/errors.ts';
import { html } from '../../platform/html.ts';
import { count } from '../../platform/plural.ts';
import { lookupId, pathParams } from '../../contract/common.schema.ts';
import { ListFlowsQuery } from '../../contract/flow.schema.ts';
import { CommentBody } from '../../contract/task.schema.ts';
import { addComment, listComments } from '../../services/flows/task-items.service.ts';
import {
  assignTask,
  completeTask,
  reopenTask,
  startTask,
} from '../../services/flows/transitions.service.ts';
import { pageFlowSnapshots, type FlowContext } from '../../services/flows/flows.service.ts';
import { flowPageModel, type FlowPageModel } from '../../services/exports/flow-page.service.ts';
import { outlook } from '../../services/flows/outlook.ts';
import { scheduleStart } from '../../services/flows/schedule.ts';
import { flowsSharedWith } from '../../services/team/shares.service.ts';
import type { DiagramModel } from '../../services/exports/diagram.ts';
import type { Reply, RequestContext, Route } from '../http/route.ts';
import { compile } from '../http/validator.ts';
import { flowActor, memberPrincipal, permit, type Need } from './acting.ts';
import {
  appRoute,
  chosenWorkspace,
  field,
  formFields,
  seeOther,
  signedInPerson,
  signinFirst,
  view,
  type AppDeps,
  type SignedInVisitor,
} from './render.ts';
import { checkCsrf, flashCookie, takeFlash } from './session.ts';
import { flowsView, flowView, taskPageView, type FlowFlash } from './flows.views.ts';
import type { OrgRow } from '../../services/account/signin.service.ts';

const LIVE_SCRIPT = readFileSync(new URL('./live.js', import.meta.url));

/** Beyond this many objectives a flow is listed, not drawn (its diagram would be megabytes of markup). */
const DIAGRAM_MAX = 500;
/** The latest comments a task's page shows. */
const COMMENTS_SHOWN = 100;

const FlowPath = pathParams({ flowId: lookupId() });
const TaskPath = pathParams({ flowId: lookupId(), taskId: lookupId() });
// Any action name is routed; one nobody offers is 404 (a page), as an unknown address is.
const ActionPath = pathParams({ flowId: lookupId(), taskId: lookupId(), action: lookupId() });
const ACTIONS = new Set(['start', 'complete', 'reopen', 'assign', 'comment']);
const checkComment = compile<{ body: string }>(CommentBody, 'body');

/** A refusal of a move, in words a person acts on. */
function refusalText(error: DomainError, model: Pick<FlowPageModel, 'taskNames'>): string {
  const details = (error.details ?? {}) as { blockedBy?: string[] };
  if (error.code === 'TASK_BLOCKED' && details.blockedBy?.length)
    return `Not started: it waits on ${details.blockedBy.map((id) => model.taskNames.get(id) ?? id).join(', ')}.`;
  if (error.code === 'VALIDATION_FAILED') {
    const problems = (error.details as { problems?: { message: string }[] } | undefined)?.problems;
    return `Not saved: the comment ${problems?.[0]?.message ?? 'is not valid'}.`;
  }
  return `Not done: ${error.message}.`.replace(/\.\.$/, '.');
}

/** Refusals a form answers on its page (the move was judged and refused); any other is an error page. */
const JUDGED = new Set([
  'TASK_BLOCKED',
  'INVALID_TRANSITION',
  'DOWNSTREAM_STARTED',
  'SUBTASKS_OUTSTANDING',
  'DELIVERABLE_MISSING',
  'VALIDATION_FAILED',
]);

export function flowRoutes(deps: AppDeps): Route[] {
  const { prefix, names } = deps;
  const flowHref = (flowId: string) => `${prefix}/flows/${encodeURIComponent(flowId)}`;
  // Diagrams drawn per flow version and day: a reload or a second reader draws nothing.
  const svgs = new LRUCache<string, Promise<string>>({ max: 200 });
  const diagram = (model: DiagramModel, start: string): Promise<string | null> => {
    if (model.tasks.length > DIAGRAM_MAX) return Promise.resolve(null);
    const key = `${model.flowId}|${model.version}|${start}`;
    let svg = svgs.get(key);
    if (!svg) {
      svg = deps.render.diagramSvg(model);
      svgs.set(key, svg);
      svg.catch(() => svgs.delete(key));
    }
    return svg;
  };

  const frame = (v: SignedInVisitor, orgs: readonly OrgRow[], workspaceId: string) => ({
    who: v.session,
    admin: orgs.some((o) => o.id === workspaceId && ['owner', 'admin'].includes(o.role)),
  });

  async function person(headers: RequestContext['headers']) {
    const found = await signedInPerson(deps, headers);
    return found && { ...found, userId: found.v.session.userId };
  }

  /**
   * The page's validator: the flow's version, the day its schedule starts, who reads it with
   * what rights, and their form token.
   */
  const pageTag = (v: SignedInVisitor, ctx: FlowContext, version: number, start: string) =>
    hash(
      'sha1',
      `${version}|${start}|${v.session.userId}|${ctx.principal.workspaceId}|${ctx.principal.role}|${ctx.principal.scopes.join()}|${v.csrf}`,
      'base64url',
    );

  /** What the person may do on the flow, by the same checks as the posts. */
  const abilities = (ctx: FlowContext, guest: boolean) => {
    const may = (need: Need) => {
      try {
        permit(ctx.principal, need);
        return true;
      } catch {
        return false;
      }
    };
    // A guest commenter is a viewer until a comment asks for more (asGuest).
    return {
      work: !guest && may('work'),
      comment: guest ? ctx.principal.scopes.includes('work:write') : may('comment'),
    };
  };

  async function flowPage(
    ctx: Pick<RequestContext, 'headers'>,
    flowId: string,
    taskId: string | null,
  ): Promise<Reply> {
    const found = await person(ctx.headers);
    if (!found)
      return signinFirst(
        prefix,
        taskId ? `${flowHref(flowId)}/tasks/${encodeURIComponent(taskId)}` : flowHref(flowId),
      );
    const acting = await flowActor(deps, found, flowId, 'read');
    const start = scheduleStart(undefined);
    const snapshot = await deps.registry.snapshot(acting.principal.workspaceId, flowId);
    const flash = takeFlash<FlowFlash>(names, ctx.headers);
    const model = await flowPageModel(deps.sql, deps.pool, snapshot, start);
    const input = {
      ...frame(found.v, found.orgs, acting.principal.workspaceId),
      flowId,
      model,
      svg: taskId ? null : await diagram(model.diagram, start),
      userId: found.userId,
      guest: acting.guest,
      can: abilities(acting, acting.guest),
      flash: flash.value,
    };
    const cookies = [...found.v.cookies, ...flash.cookies];
    const tag = pageTag(found.v, acting, snapshot.version, start);
    const options = {
      cookies,
      scripts: [`${prefix}/live.js`],
      head: html`<meta name="fp-page-tag" content="${tag}">`,
      // A page with a message is shown once: not kept by the browser, so no ETag of its own.
      ...(flash.value ? {} : { etag: tag }),
    };
    if (!taskId)
      return view(model.diagram.flowName, flowView({ prefix, csrf: found.v.csrf }, input), options);
    const entry = model.tasks.find((t) => t.task.id === taskId);
    if (!entry)
      throw new DomainError(
        'NOT_FOUND',
        'No such task in this flow (a sub-task shows on its objective’s page)',
      );
    const first = await listComments(acting, flowId, taskId, { size: COMMENTS_SHOWN, from: 0 });
    const comments =
      first.total > COMMENTS_SHOWN
        ? await listComments(acting, flowId, taskId, {
            size: COMMENTS_SHOWN,
            from: first.total - COMMENTS_SHOWN,
          })
        : first;
    return view(
      `${entry.task.name} · ${model.diagram.flowName}`,
      taskPageView({ prefix, csrf: found.v.csrf }, { ...input, entry, comments }),
      // Comments change no version: the task page is not kept by the browser.
      { cookies },
    );
  }

  /** Runs a move and says what happened; a judged refusal becomes the message. */
  async function move(
    acting: FlowContext,
    flowId: string,
    taskId: string,
    action: string,
    fields: Map<string, string[]>,
    userId: string,
  ): Promise<FlowFlash> {
    try {
      switch (action) {
        case 'start':
          await startTask(acting, flowId, taskId);
          return { notice: `Started ${await taskName(acting, flowId, taskId)}.` };
        case 'complete': {
          const { snapshot, unblocked } = await completeTask(acting, flowId, taskId);
          return {
            notice: `Completed ${snapshot.task(taskId)?.name ?? 'the task'}${unblocked.length ? `; ${count(unblocked.length, 'task')} now ready` : ''}.`,
            unblocked: unblocked.map((id) => snapshot.task(id)?.name ?? id),
          };
        }
        case 'reopen':
          await reopenTask(acting, flowId, taskId);
          return { notice: `Reopened ${await taskName(acting, flowId, taskId)}.` };
        case 'assign':
          await assignTask(acting, flowId, taskId, userId);
          return { notice: `Assigned ${await taskName(acting, flowId, taskId)} to you.` };
        default: {
          const { body } = checkComment({ body: field(fields, 'body') });
          await addComment(acting, flowId, taskId, body);
          return { notice: 'Comment added.' };
        }
      }
    } catch (error) {
      if (!(error instanceof DomainError) || !JUDGED.has(error.code)) throw error;
      const snapshot = await acting.registry.snapshot(acting.principal.workspaceId, flowId);
      return {
        error: refusalText(error, {
          taskNames: new Map(snapshot.state.tasks.map((t) => [t.id, t.name])),
        }),
      };
    }
  }

  const taskName = async (acting: FlowContext, flowId: string, taskId: string) =>
    (await acting.registry.snapshot(acting.principal.workspaceId, flowId)).task(taskId)?.name ??
    'the task';

  return [
    appRoute({
      method: 'GET',
      path: `${prefix}/flows`,
      operationId: 'appFlows',
      summary: 'The flows a person can read',
      query: ListFlowsQuery,
      handler: async (ctx) => {
        const found = await person(ctx.headers);
        if (!found) return signinFirst(prefix, `${prefix}/flows`);
        const { v, orgs } = found;
        const org = chosenWorkspace(found);
        const query = {
          q: ctx.query.q ?? '',
          archived: ctx.query.archived,
          from: ctx.query.from,
          size: ctx.query.size,
        };
        let flows = null;
        if (org) {
          const acting = {
            sql: deps.sql,
            registry: deps.registry,
            principal: memberPrincipal(org, found.userId),
          };
          permit(acting.principal, 'read');
          const start = scheduleStart(undefined);
          const page = await pageFlowSnapshots(acting, { ...query, q: query.q || undefined });
          flows = {
            total: page.total,
            items: page.items.map((snapshot) => {
              const summary = snapshot.summary();
              const seen = outlook(snapshot, start);
              return {
                id: summary.id,
                name: summary.name,
                dueDate: summary.dueDate,
                projectedFinish: seen.projectedFinish,
                onTrack: seen.onTrack,
                taskCount: summary.taskCount,
                doneCount: summary.doneCount,
              };
            }),
          };
        }
        return view(
          'Flows',
          flowsView(
            { prefix, csrf: v.csrf },
            {
              ...frame(v, orgs, org?.id ?? ''),
              workspaceName: org?.name ?? null,
              query,
              flows,
              shared: await flowsSharedWith(deps.sql, found.userId),
            },
          ),
          { cookies: v.cookies },
        );
      },
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/flows/{flowId}`,
      operationId: 'appFlow',
      summary: "A flow's page",
      params: FlowPath,
      // Answers 304 before anything is drawn when the browser holds this version of the page.
      etag: async (ctx) => {
        const found = await person(ctx.headers);
        // A message waiting is shown, never answered by a 304.
        if (!found || takeFlash(names, ctx.headers).value !== null) return null;
        const acting = await flowActor(deps, found, ctx.params.flowId, 'read');
        const snapshot = await deps.registry.snapshot(
          acting.principal.workspaceId,
          ctx.params.flowId,
        );
        return pageTag(found.v, acting, snapshot.version, scheduleStart(undefined));
      },
      handler: (ctx) => flowPage(ctx, ctx.params.flowId, null),
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/flows/{flowId}/tasks/{taskId}`,
      operationId: 'appTask',
      summary: "A task's page with its comments",
      params: TaskPath,
      handler: (ctx) => flowPage(ctx, ctx.params.flowId, ctx.params.taskId),
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/flows/{flowId}/tasks/{taskId}/{action}`,
      operationId: 'appTaskAction',
      summary: 'Start, complete, reopen, assign to me, or comment',
      params: ActionPath,
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const found = await person(ctx.headers);
        if (!found) return seeOther(`${prefix}/signin`);
        const { flowId, taskId, action } = ctx.params;
        if (!ACTIONS.has(action)) throw notFound('Action');
        const need: Need = action === 'comment' ? 'comment' : 'work';
        const acting = await flowActor(deps, found, flowId, need);
        const flash = await move(acting, flowId, taskId, action, fields, found.userId);
        const back =
          action === 'comment'
            ? `${flowHref(flowId)}/tasks/${encodeURIComponent(taskId)}`
            : `${flowHref(flowId)}#task-${encodeURIComponent(taskId)}`;
        return seeOther(back, flashCookie(names, ctx.headers, flash));
      },
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/live.js`,
      operationId: 'appLiveScript',
      summary: "The flow page's refresh when the flow changes (progressive enhancement)",
      handler: () => ({
        status: 200,
        body: LIVE_SCRIPT,
        contentType: 'text/javascript; charset=utf-8',
        headers: { 'Cache-Control': 'public, max-age=3600' },
      }),
    }),
  ];
}
