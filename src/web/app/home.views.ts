/** Markup of the app's home page, its notification settings page, and the navigation every signed-in page carries. */
import { html, type Html } from '../../platform/html.ts';
import { count } from '../../platform/plural.ts';
import type { HomeWorkItem } from '../../services/account/home.service.ts';
import type { OrgRow } from '../../services/account/signin.service.ts';
import { csrfField, errorBox, signoutForm, type FormContext } from './signin.views.ts';

export interface Who {
  name: string;
  email: string;
}

/** Where a signed-in person can go from any page, and Sign out. */
export function appNav(
  form: FormContext,
  input: { who: Who; admin: boolean; current: 'home' | 'flows' | 'notifications' | 'access' },
): Html {
  const { prefix } = form;
  const link = (key: typeof input.current, href: string, text: string) =>
    html`<li><a href="${href}"${input.current === key ? html` aria-current="page"` : ''}>${text}</a></li>`;
  return html`<nav aria-label="App" class="app-nav"><ul>
  ${link('home', prefix || '/', 'Home')}
  ${link('flows', `${prefix}/flows`, 'Flows')}
  ${link('notifications', `${prefix}/notifications`, 'Notification settings')}
  ${input.admin ? link('access', `${prefix}/access`, 'API access') : ''}
</ul></nav>
${signoutForm(form, input.who)}`;
}

const STATUS_TEXT: Record<HomeWorkItem['status'], string> = {
  ready: 'Ready',
  in_progress: 'In progress',
};

export function homeView(
  form: FormContext,
  input: {
    who: Who;
    workspace: OrgRow;
    workspaces: OrgRow[];
    work: { total: number; items: HomeWorkItem[] };
  },
): Html {
  const { prefix } = form;
  const admin = ['owner', 'admin'].includes(input.workspace.role);
  const others = input.workspaces.filter((org) => org.id !== input.workspace.id);
  return html`<h1>Welcome, ${input.who.name}</h1>
${appNav(form, { who: input.who, admin, current: 'home' })}
<p>You are ${input.workspace.role === 'admin' || input.workspace.role === 'owner' ? `an ${input.workspace.role}` : `a ${input.workspace.role}`} of <strong>${input.workspace.name}</strong>.</p>
<section aria-labelledby="work-title">
  <h2 id="work-title">Your work</h2>
  ${
    input.work.items.length === 0
      ? html`<p>Nothing is assigned to you that is ready or in progress. When someone assigns you a task, it shows here, and you get an email unless you switch that off in your <a href="${prefix}/notifications">notification settings</a>.</p>`
      : html`<p class="muted">${count(input.work.total, 'task')} ready or in progress, what decides a finish date first${input.work.total > input.work.items.length ? ` (the first ${input.work.items.length} shown)` : ''}.</p>
  <div class="table-scroll"><table>
    <thead><tr><th scope="col">Task</th><th scope="col">Flow</th><th scope="col">Status</th></tr></thead>
    <tbody>${input.work.items.map(
      (item) => html`<tr>
      <td><a href="${prefix}/flows/${encodeURIComponent(item.flowId)}#task-${item.taskId}"><bdi>${item.taskName}</bdi></a>${item.criticalPath ? html` <span class="tag">critical path</span>` : ''}</td>
      <td><a href="${prefix}/flows/${encodeURIComponent(item.flowId)}"><bdi>${item.flowName}</bdi></a></td>
      <td>${STATUS_TEXT[item.status]}</td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>
<section aria-labelledby="workspaces-title">
  <h2 id="workspaces-title">Your workspaces</h2>
  <ul class="workspaces">
    <li><strong>${input.workspace.name}</strong> <span class="muted">(${input.workspace.role}, open now)</span></li>
    ${others.map(
      (org) => html`<li><form method="post" action="${prefix}/workspaces" class="inline">
      ${csrfField(form)}<input type="hidden" name="workspace" value="${org.id}">
      ${org.name} <span class="muted">(${org.role})</span> <button type="submit" class="secondary" aria-label="Switch to ${org.name}">Switch</button>
    </form></li>`,
    )}
  </ul>
</section>
${
  admin
    ? html`<section aria-labelledby="admin-title">
  <h2 id="admin-title">For admins</h2>
  <p><a href="${prefix}/access">API access</a>: keys and OAuth clients for ${input.workspace.name}.</p>
</section>`
    : ''
}`;
}

export interface SettingsInput {
  who: Who;
  workspace: OrgRow;
  settings: {
    email: boolean;
    assigned: boolean;
    unlocked: boolean;
    digest: boolean;
    timezone: string;
    digestHour: number;
  };
  flows: { id: string; name: string; muted: boolean }[];
  /** Time zones to offer (the current one among them). */
  zones: string[];
  error: string | null;
  notice: string | null;
}

const checkbox = (
  name: string,
  label: string,
  checked: boolean,
  hint?: string,
) => html`<div class="choice">
  <input type="checkbox" id="${name}" name="${name}" value="on"${checked ? html` checked` : ''}${hint ? html` aria-describedby="${name}-hint"` : ''}>
  <label for="${name}">${label}</label>
</div>${hint ? html`<p class="muted hint" id="${name}-hint">${hint}</p>` : ''}`;

export function settingsView(form: FormContext, input: SettingsInput): Html {
  const { prefix } = form;
  const { settings } = input;
  const admin = ['owner', 'admin'].includes(input.workspace.role);
  return html`<h1>Notification settings: ${input.workspace.name}</h1>
${appNav(form, { who: input.who, admin, current: 'notifications' })}
${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
${errorBox('settings-error', input.error)}
<form method="post" action="${prefix}/notifications" class="stack">
  ${csrfField(form)}
  <input type="hidden" name="workspace" value="${input.workspace.id}">
  <fieldset><legend>Email</legend>
    ${checkbox('email', 'Send me email from flowplan', settings.email, 'The master switch: while it is unticked, none of the emails below is sent.')}
  </fieldset>
  <fieldset><legend>What to email me about</legend>
    ${checkbox('assigned', 'A task is assigned to me', settings.assigned)}
    ${checkbox('unlocked', 'A task of mine is ready to start', settings.unlocked)}
    ${checkbox('digest', 'A morning summary of my work', settings.digest)}
  </fieldset>
  <fieldset><legend>Morning summary</legend>
    <div class="field"><label for="timezone">Time zone</label>
    <select id="timezone" name="timezone"${input.error ? html` aria-describedby="settings-error"` : ''}>
      ${input.zones.map((zone) => html`<option value="${zone}"${zone === settings.timezone ? html` selected` : ''}>${zone}</option>`)}
    </select></div>
    <div class="field"><label for="digestHour">Hour it arrives</label>
    <select id="digestHour" name="digestHour">
      ${Array.from({ length: 24 }, (_, hour) => html`<option value="${String(hour)}"${hour === settings.digestHour ? html` selected` : ''}>${String(hour).padStart(2, '0')}:00</option>`)}
    </select></div>
  </fieldset>
  <fieldset><legend>Muted flows</legend>
    ${
      input.flows.length === 0
        ? html`<p class="muted">${input.workspace.name} has no flows yet.</p>`
        : html`<p class="muted hint">No email when a task of a muted flow is assigned to you or becomes ready.</p>
    ${input.flows.map(
      (flow) => html`<div class="choice">
      <input type="checkbox" id="mute-${flow.id}" name="muted" value="${flow.id}"${flow.muted ? html` checked` : ''}>
      <label for="mute-${flow.id}">${flow.name}</label>
    </div>`,
    )}`
    }
  </fieldset>
  <button type="submit">Save settings</button>
</form>
<p class="muted">Every email also carries a link to stop them all at once, without signing in.</p>`;
}
