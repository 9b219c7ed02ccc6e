/**
 * Markup of the sign-in, consent, workspace-picker and message pages: plain forms that work
 * without JavaScript, every field labelled, errors announced (`role="alert"`) and tied to
 * their fields with `aria-describedby`. Every value goes through the escaping `html` tag.
 */
import { html, type Html } from '../../platform/html.ts';
import { SCOPE_TEXT } from '../schemas/openapi.ts';
import type { OrgRow } from '../../services/account/signin.service.ts';

export interface FormContext {
  /** The app's path prefix (`/app`). */
  prefix: string;
  csrf: string;
}

export const csrfField = (form: FormContext) =>
  html`<input type="hidden" name="csrf" value="${form.csrf}">`;

export function errorBox(id: string, message: string | null): Html {
  return message ? html`<p class="form-error" id="${id}" role="alert">${message}</p>` : html``;
}

/** `aria-describedby` and `aria-invalid` for a field whose error (if any) has this id. */
const describedBy = (id: string, error: string | null) =>
  error ? html` aria-describedby="${id}" aria-invalid="true"` : html``;

export function signinView(
  form: FormContext,
  input: {
    request: string | null;
    /** The app page to go on to once signed in (a link followed while signed out). */
    next?: string | null;
    clientName: string | null;
    email: string;
    error: string | null;
    notice: string | null;
  },
): Html {
  return html`<h1>Sign in to flowplan</h1>
${input.clientName ? html`<p>${input.clientName} asks to use your flowplan account. Sign in to continue.</p>` : ''}
${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
${errorBox('signin-error', input.error)}
<form method="post" action="${form.prefix}/signin" class="stack">
  ${csrfField(form)}
  ${input.request ? html`<input type="hidden" name="request" value="${input.request}">` : ''}
  ${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${input.email}"${describedBy('signin-error', input.error)}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${describedBy('signin-error', input.error)}>
  <button type="submit">Sign in</button>
</form>`;
}

export function signoutForm(form: FormContext, who: { name: string; email: string }): Html {
  return html`<form method="post" action="${form.prefix}/signout" class="signout">
  ${csrfField(form)}
  <p>Signed in as ${who.name} (${who.email}).</p>
  <button type="submit" class="secondary">Sign out</button>
</form>`;
}

function workspaceChoices(orgs: OrgRow[], selected: string | null): Html {
  const chosen = orgs.some((org) => org.id === selected) ? selected : orgs[0]?.id;
  return html`${orgs.map(
    (org) => html`<div class="choice">
    <input type="radio" id="ws-${org.id}" name="workspace" value="${org.id}"${org.id === chosen ? html` checked` : ''}>
    <label for="ws-${org.id}">${org.name} <span class="muted">(${org.role})</span></label>
  </div>`,
  )}`;
}

export function consentView(
  form: FormContext,
  input: {
    request: string;
    clientName: string;
    scopes: string[];
    orgs: OrgRow[];
    workspaceId: string | null;
    who: { name: string; email: string };
    error: string | null;
  },
): Html {
  const single = input.orgs.length === 1 ? input.orgs[0]! : null;
  return html`<h1>Allow ${input.clientName} to use your account?</h1>
${errorBox('consent-error', input.error)}
<form method="post" action="${form.prefix}/consent" class="stack">
  ${csrfField(form)}
  <input type="hidden" name="request" value="${input.request}">
  ${
    single
      ? html`<input type="hidden" name="workspace" value="${single.id}"><p>Workspace: <strong>${single.name}</strong> (${single.role})</p>`
      : html`<fieldset><legend>Workspace</legend>${workspaceChoices(input.orgs, input.workspaceId)}</fieldset>`
  }
  <fieldset${describedBy('consent-error', input.error)}>
    <legend>${input.clientName} asks to</legend>
    <p class="muted" id="scope-hint">Untick anything you do not want to allow. What your role in the workspace does not permit stays refused whatever you tick.</p>
    ${input.scopes.map(
      (scope) => html`<div class="choice">
      <input type="checkbox" id="scope-${scope}" name="scope" value="${scope}" checked aria-describedby="scope-hint">
      <label for="scope-${scope}">${SCOPE_TEXT[scope] ?? scope} <code>${scope}</code></label>
    </div>`,
    )}
  </fieldset>
  <div class="actions">
    <button type="submit" name="decision" value="approve">Allow</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>
${signoutForm(form, input.who)}`;
}

export function pickerView(
  form: FormContext,
  input: { orgs: OrgRow[]; workspaceId: string | null; who: { name: string; email: string } },
): Html {
  return html`<h1>Choose a workspace</h1>
${signoutForm(form, input.who)}
${
  input.orgs.length === 0
    ? html`<p>You do not belong to any workspace yet. Ask an admin for an invitation.</p>`
    : html`<form method="post" action="${form.prefix}/workspaces" class="stack">
  ${csrfField(form)}
  <fieldset><legend>Your workspaces</legend>${workspaceChoices(input.orgs, input.workspaceId)}</fieldset>
  <button type="submit">Open</button>
</form>`
}`;
}

export function messageView(
  title: string,
  message: string,
  link?: { href: string; text: string },
): Html {
  return html`<h1>${title}</h1>
<p>${message}</p>
${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}`;
}
