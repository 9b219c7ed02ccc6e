/**
 * Markup of the app's flow pages: the list of flows a person can read, a flow's page (the
 * public page's facts and diagram, the tasks grouped by status with what each waits on and
 * holds up, the schedule and the report) and a task's page with its comments. Actions are
 * plain forms, shown only to those who may use them; every value goes through `html`.
 */
import type { ReportView } from '../../services/flows/report.ts';
import type { ScheduleView } from '../../services/flows/schedule.ts';
import type { FlowPageModel, PageTask } from '../../services/exports/flow-page.service.ts';
import type { TaskView } from '../../services/flows/flow-body.ts';
import { hoursText, rangeText } from '../../services/exports/hours.ts';
import { html, type Html } from '../../platform/html.ts';
import { count } from '../../platform/plural.ts';
import { diagramBox, flowFacts } from '../public/public.views.ts';
import { appNav, type Who } from './home.views.ts';
import { csrfField, errorBox, type FormContext } from './signin.views.ts';

/** Where a signed-in page's navigation stands: the person and whether they administer the workspace. */
export interface Frame {
  who: Who;
  admin: boolean;
}

/** What a form post hands the page it redirects to. */
export interface FlowFlash {
  notice?: string;
  error?: string;
  /** Names of the tasks a completion made ready. */
  unblocked?: string[];
}

export interface FlowCard {
  id: string;
  name: string;
  dueDate: string | null;
  projectedFinish: string | null;
  onTrack: boolean | null;
  taskCount: number;
  doneCount: number;
}

export interface SharedCard {
  flowId: string;
  flowName: string;
  workspaceName: string;
  role: string;
}

const day = (value: string | null) => (value ? value.slice(0, 10) : null);

const flowHref = (prefix: string, flowId: string) =>
  `${prefix}/flows/${encodeURIComponent(flowId)}`;
const taskHref = (prefix: string, flowId: string, taskId: string) =>
  `${flowHref(prefix, flowId)}/tasks/${encodeURIComponent(taskId)}`;

function onTrackText(card: Pick<FlowCard, 'onTrack' | 'dueDate'>): Html {
  if (card.onTrack === null)
    return html`<span class="muted">${card.dueDate ? 'Nothing open' : 'No due date'}</span>`;
  return card.onTrack
    ? html`<span class="verdict-on-track">On track</span>`
    : html`<span class="verdict-late">Late</span>`;
}

export function flowsView(
  form: FormContext,
  input: Frame & {
    workspaceName: string | null;
    query: { q: string; archived: boolean; from: number; size: number };
    flows: { total: number; items: FlowCard[] } | null;
    shared: SharedCard[];
  },
): Html {
  const { prefix } = form;
  const { query, flows } = input;
  const pageLink = (from: number) => {
    const params = new URLSearchParams();
    if (query.q) params.set('q', query.q);
    if (query.archived) params.set('archived', 'true');
    if (from > 0) params.set('from', String(from));
    const text = params.toString();
    return `${prefix}/flows${text ? `?${text}` : ''}`;
  };
  const list = flows
    ? html`<section aria-labelledby="flows-title">
  <h2 id="flows-title">${query.archived ? 'Archived flows' : 'Flows'} of ${input.workspaceName ?? ''}</h2>
  <form method="get" action="${prefix}/flows" class="inline" role="search">
    <label for="q">Search flows by name</label>
    <input id="q" name="q" type="search" value="${query.q}" maxlength="200">
    <div class="choice"><input type="checkbox" id="archived" name="archived" value="true"${query.archived ? html` checked` : ''}><label for="archived">Archived</label></div>
    <button type="submit" class="secondary">Search</button>
  </form>
  ${
    flows.items.length === 0
      ? html`<p>${query.q ? `No ${query.archived ? 'archived ' : ''}flow's name contains “${query.q}”.` : query.archived ? 'No archived flows.' : 'No flows yet. Flows are made through the API or from a template; once there is one, it shows here.'}</p>`
      : html`<p class="muted">${count(flows.total, 'flow')}${flows.total > flows.items.length ? `, ${query.from + 1}–${query.from + flows.items.length} shown` : ''}.</p>
  <div class="table-scroll"><table>
    <thead><tr><th scope="col">Flow</th><th scope="col">Due</th><th scope="col">Projected finish</th><th scope="col">On track</th><th scope="col">Progress</th></tr></thead>
    <tbody>${flows.items.map(
      (card) => html`<tr>
      <td><a href="${flowHref(prefix, card.id)}"><bdi>${card.name}</bdi></a></td>
      <td>${day(card.dueDate) ?? html`<span class="muted">None</span>`}</td>
      <td>${day(card.projectedFinish) ?? html`<span class="muted">${card.taskCount > card.doneCount ? 'Not scheduled' : 'All done'}</span>`}</td>
      <td>${onTrackText(card)}</td>
      <td><progress max="${String(Math.max(card.taskCount, 1))}" value="${String(card.doneCount)}" aria-label="${card.name}: ${card.doneCount} of ${card.taskCount} tasks done"></progress> ${card.doneCount} of ${card.taskCount} done</td>
    </tr>`,
    )}</tbody>
  </table></div>
  <nav aria-label="Pages of flows" class="actions">
    ${query.from > 0 ? html`<a href="${pageLink(Math.max(0, query.from - query.size))}" rel="prev">Previous page</a>` : ''}
    ${query.from + flows.items.length < flows.total ? html`<a href="${pageLink(query.from + query.size)}" rel="next">Next page</a>` : ''}
  </nav>`
  }
</section>`
    : '';
  const shared =
    input.shared.length > 0
      ? html`<section aria-labelledby="shared-title">
  <h2 id="shared-title">Shared with you</h2>
  <ul>${input.shared.map(
    (card) =>
      html`<li><a href="${flowHref(prefix, card.flowId)}"><bdi>${card.flowName}</bdi></a> <span class="muted">(${card.workspaceName}, as ${card.role === 'commenter' ? 'a commenter' : 'a viewer'})</span></li>`,
  )}</ul>
</section>`
      : !flows
        ? html`<p>Nothing is shared with you yet.</p>`
        : '';
  return html`<h1>Flows</h1>
${appNav(form, { ...input, current: 'flows' })}
${list}
${shared}`;
}

const GROUPS: { status: TaskView['status']; title: string }[] = [
  { status: 'in_progress', title: 'In progress' },
  { status: 'ready', title: 'Ready' },
  { status: 'blocked', title: 'Blocked' },
  { status: 'done', title: 'Done' },
];

/** Tasks listed in each status group; the rest are counted (a large flow's page stays readable). */
export const GROUP_SHOWN = 200;

export interface FlowPageInput extends Frame {
  flowId: string;
  model: FlowPageModel;
  /** The diagram's SVG, or null when the flow is too large to draw on a page. */
  svg: string | null;
  userId: string;
  guest: boolean;
  /** What this person may do here. */
  can: { work: boolean; comment: boolean };
  flash: FlowFlash | null;
}

function names(
  prefix: string,
  flowId: string,
  ids: readonly string[],
  taskNames: ReadonlyMap<string, string>,
): Html {
  return html`${ids.map(
    (id, i) =>
      html`${i > 0 ? ', ' : ''}<a href="${flowHref(prefix, flowId)}#task-${id}"><bdi>${taskNames.get(id) ?? id}</bdi></a>`,
  )}`;
}

function action(
  form: FormContext,
  flowId: string,
  task: TaskView,
  verb: string,
  text: string,
  secondary = false,
): Html {
  return html`<form method="post" action="${taskHref(form.prefix, flowId, task.id)}/${verb}" class="inline">${csrfField(form)}<button type="submit"${secondary ? html` class="secondary"` : ''} aria-label="${text}: ${task.name}">${text}</button></form>`;
}

/** The actions a task offers this person in its status. */
function actions(form: FormContext, input: FlowPageInput, task: TaskView): Html {
  if (!input.can.work) return html``;
  const forms: Html[] = [];
  if (task.status === 'ready') forms.push(action(form, input.flowId, task, 'start', 'Start'));
  if (task.status === 'in_progress')
    forms.push(action(form, input.flowId, task, 'complete', 'Complete'));
  if (task.status === 'done')
    forms.push(action(form, input.flowId, task, 'reopen', 'Reopen', true));
  if (task.status !== 'done' && task.assigneeId !== input.userId)
    forms.push(action(form, input.flowId, task, 'assign', 'Assign to me', true));
  return forms.length ? html`<div class="actions">${forms}</div>` : html``;
}

function estimate(task: Pick<TaskView, 'estimateHours' | 'estimateRange'>): string {
  return `${hoursText(task.estimateHours)}${task.estimateRange ? ` (${rangeText(task.estimateRange)})` : ''}`;
}

function taskCard(form: FormContext, input: FlowPageInput, entry: PageTask): Html {
  const { prefix } = form;
  const { task, next, holdsUp } = entry;
  const { taskNames, people } = input.model;
  const assignee = task.assigneeId
    ? task.assigneeId === input.userId
      ? 'you'
      : (people.get(task.assigneeId) ?? 'someone no longer in the workspace')
    : null;
  const subtasksDone = task.subtasks.filter((s) => s.done).length;
  return html`<li id="task-${task.id}" class="task-card${task.criticalPath ? ' critical' : ''}">
<h4><bdi>${task.name}</bdi>${task.criticalPath ? html` <span class="tag">critical path</span>` : ''}</h4>
<p class="muted">${assignee ? `Assigned to ${assignee}` : 'Unassigned'} · ${estimate(task)}${task.subtasks.length ? ` · ${subtasksDone} of ${count(task.subtasks.length, 'sub-task')} done` : ''}</p>
${task.blockedBy.length ? html`<p>Waits on ${names(prefix, input.flowId, task.blockedBy, taskNames)}</p>` : task.dependsOn.length ? html`<p>After ${names(prefix, input.flowId, task.dependsOn, taskNames)}</p>` : ''}
${next.length ? html`<p>Next: ${names(prefix, input.flowId, next, taskNames)}${holdsUp > 0 ? html` <span class="muted">· holds up ${count(holdsUp, 'task')}</span>` : ''}</p>` : ''}
${actions(form, input, task)}
<p><a href="${taskHref(prefix, input.flowId, task.id)}">Details and comments<span class="visually-hidden">: ${task.name}</span></a></p>
</li>`;
}

function taskGroups(form: FormContext, input: FlowPageInput): Html {
  const { tasks } = input.model;
  if (tasks.length === 0) return html`<p>This flow has no tasks yet.</p>`;
  return html`${GROUPS.map(({ status, title }) => {
    const group = tasks.filter((t) => t.task.status === status);
    if (group.length === 0) return '';
    const shown = group.slice(0, GROUP_SHOWN);
    const list = html`<ul class="task-cards">${shown.map((entry) => taskCard(form, input, entry))}</ul>${
      group.length > shown.length
        ? html`<p class="muted">… and ${count(group.length - shown.length, 'more task')}: the API's paged task list has them all.</p>`
        : ''
    }`;
    const heading = html`<h3 id="group-${status}">${title} (${group.length})</h3>`;
    // Done work is history: folded away unless opened.
    return status === 'done'
      ? html`<section aria-labelledby="group-${status}">${heading}<details><summary>Show the ${count(group.length, 'done task')}</summary>${list}</details></section>`
      : html`<section aria-labelledby="group-${status}">${heading}${list}</section>`;
  })}`;
}

function scheduleTable(prefix: string, flowId: string, schedule: ScheduleView): Html {
  const rows = schedule.entries.filter((e) => e.earliestStart !== undefined);
  if (rows.length === 0) return html`<p>Nothing left to schedule.</p>`;
  const shown = rows.slice(0, GROUP_SHOWN);
  return html`<p class="muted">Working days from ${schedule.startDate}.</p>
<div class="table-scroll"><table>
  <thead><tr><th scope="col">Task</th><th scope="col">Starts</th><th scope="col">Finishes</th><th scope="col">Critical</th></tr></thead>
  <tbody>${shown.map(
    (entry) =>
      html`<tr><td><a href="${flowHref(prefix, flowId)}#task-${entry.taskId}"><bdi>${entry.taskName}</bdi></a></td><td>${entry.earliestStart ?? '—'}</td><td>${entry.earliestFinish ?? '—'}</td><td>${entry.criticalPath ? 'Yes' : 'No'}</td></tr>`,
  )}</tbody>
</table></div>${rows.length > shown.length ? html`<p class="muted">… and ${count(rows.length - shown.length, 'more task')}.</p>` : ''}`;
}

function reportSection(report: ReportView): Html {
  const percent = Math.round(report.completion * 100);
  return html`<dl class="facts">
<div><dt>Complete</dt><dd>${percent}%</dd></div>
<div><dt>Done</dt><dd>${report.tasksDone} of ${report.tasksTotal}</dd></div>
<div><dt>Ready</dt><dd>${report.tasksReady}</dd></div>
<div><dt>Blocked</dt><dd>${report.tasksBlocked}</dd></div>
<div><dt>Hours left</dt><dd>${hoursText(report.hoursRemaining)}</dd></div>
</dl>
${
  report.workload.length
    ? html`<h3>Who has what</h3><div class="table-scroll"><table>
  <thead><tr><th scope="col">Person</th><th scope="col">Open tasks</th><th scope="col">Hours left</th></tr></thead>
  <tbody>${report.workload.map((w) => html`<tr><td>${w.name ?? 'Someone no longer in the workspace'}</td><td>${w.openTasks}</td><td>${hoursText(w.hoursRemaining)}</td></tr>`)}</tbody>
</table></div>`
    : ''
}
${
  report.topBlockers.length
    ? html`<h3>Holding up the most</h3><ol>${report.topBlockers.map((b) => html`<li><bdi>${b.taskName}</bdi> <span class="muted">holds up ${count(b.blocking, 'task')}</span></li>`)}</ol>`
    : ''
}`;
}

function flashBox(flash: FlowFlash | null): Html {
  if (!flash) return html``;
  if (flash.error) return errorBox('flow-error', flash.error);
  return html`<div class="notice" role="status"><p>${flash.notice ?? ''}</p>${
    flash.unblocked?.length
      ? html`<p>Now ready: ${flash.unblocked.map((name, i) => html`${i > 0 ? ', ' : ''}<bdi>${name}</bdi>`)}.</p>`
      : ''
  }</div>`;
}

export function flowView(form: FormContext, input: FlowPageInput): Html {
  const { prefix } = form;
  const { model } = input;
  const title = model.diagram.flowName;
  return html`<h1><bdi>${title}</bdi></h1>
${appNav(form, { ...input, current: 'flows' })}
${flashBox(input.flash)}
${model.archived ? html`<p class="notice">This flow is archived: it is out of the workspace's lists until it is restored.</p>` : ''}
${input.guest ? html`<p class="muted">Shared with you as a ${input.can.comment ? 'commenter' : 'viewer'}.</p>` : ''}
${flowFacts(model.diagram)}
<nav aria-label="On this page" class="actions"><a href="#tasks-heading">Tasks</a> <a href="#diagram-heading">Diagram</a> <a href="#schedule-heading">Schedule</a> <a href="#report-heading">Report</a></nav>
<section aria-labelledby="tasks-heading"><h2 id="tasks-heading">Tasks</h2>
${input.can.work ? '' : html`<p class="muted">You can read this flow; ${input.can.comment ? 'you can comment on its tasks, and ' : ''}members of its workspace move its work.</p>`}
${taskGroups(form, input)}</section>
<section aria-labelledby="diagram-heading"><h2 id="diagram-heading">Dependency diagram</h2>
${
  input.svg
    ? html`<p class="muted">Thick red borders mark the critical path: the tasks that decide the finish date.</p>
${diagramBox(input.svg, `Dependency diagram of ${title}`, true)}`
    : html`<p>This flow is too large to draw on a page; its tasks are listed above.</p>`
}</section>
<section aria-labelledby="schedule-heading"><h2 id="schedule-heading">Schedule</h2>${scheduleTable(prefix, input.flowId, model.schedule)}</section>
<section aria-labelledby="report-heading"><h2 id="report-heading">Report</h2>${reportSection(model.report)}</section>`;
}

export interface Comment {
  authorName: string | null;
  body: string;
  createdAt: string;
}

export function taskPageView(
  form: FormContext,
  input: FlowPageInput & {
    entry: PageTask;
    comments: { total: number; items: Comment[] };
  },
): Html {
  const { prefix } = form;
  const { task } = input.entry;
  return html`<h1><bdi>${task.name}</bdi></h1>
${appNav(form, { ...input, current: 'flows' })}
<p><a href="${flowHref(prefix, input.flowId)}#task-${task.id}">Back to <bdi>${input.model.diagram.flowName}</bdi></a></p>
${flashBox(input.flash)}
<ul class="task-cards">${taskCard(form, input, input.entry)}</ul>
${task.description ? html`<section aria-labelledby="description-heading"><h2 id="description-heading">Description</h2><p class="prose">${task.description}</p></section>` : ''}
${
  task.subtasks.length
    ? html`<section aria-labelledby="subtasks-heading"><h2 id="subtasks-heading">Sub-tasks</h2><ul>${task.subtasks.map(
        (s) =>
          html`<li><bdi>${s.name}</bdi> <span class="muted">· ${s.done ? 'Done' : 'Open'} · ${estimate(s)}${s.assigneeId ? ` · ${s.assigneeId === input.userId ? 'you' : (input.model.people.get(s.assigneeId) ?? 'someone')}` : ''}</span></li>`,
      )}</ul></section>`
    : ''
}
<section aria-labelledby="comments-heading"><h2 id="comments-heading">Comments (${input.comments.total})</h2>
${
  input.comments.items.length === 0
    ? html`<p class="muted">No comments yet.</p>`
    : html`<ol class="comments">${input.comments.items.map(
        (c) =>
          html`<li><p><strong>${c.authorName ?? 'Someone'}</strong> <span class="muted">${c.createdAt.slice(0, 16).replace('T', ' ')} UTC</span></p><p class="prose">${c.body}</p></li>`,
      )}</ol>${input.comments.total > input.comments.items.length ? html`<p class="muted">The latest ${input.comments.items.length} shown.</p>` : ''}`
}
${
  input.can.comment
    ? html`<form method="post" action="${taskHref(prefix, input.flowId, task.id)}/comment" class="stack">
  ${csrfField(form)}
  <label for="comment-body">Add a comment</label>
  <textarea id="comment-body" name="body" rows="4" maxlength="20000" required></textarea>
  <button type="submit">Comment</button>
</form>`
    : ''
}
</section>`;
}
