/** Markup of the API access page and the invitation page. */
import { ROLES, SCOPES } from '../../services/auth/principal.ts';
import { html, type Html } from '../../platform/html.ts';
import { SCOPE_TEXT } from '../schemas/openapi.ts';
import type { CredentialListRow } from '../../services/account/access.service.ts';
import type { InviteLink } from '../../services/account/invite-links.service.ts';
import { csrfField, errorBox, signoutForm, type FormContext } from './signin.views.ts';
import { appNav } from './home.views.ts';
import { MAX_PASSWORD, MIN_PASSWORD } from '../../services/account/password.ts';

export function accessView(
  form: FormContext,
  input: {
    workspaceName: string;
    credentials: CredentialListRow[];
    firstParty: CredentialListRow[];
    who: { name: string; email: string };
    created: { id: string; key: string; rotated: boolean } | null;
    error: string | null;
    notice: string | null;
  },
): Html {
  const { prefix } = form;
  return html`<h1>API access: ${input.workspaceName}</h1>
${appNav(form, { who: input.who, admin: true, current: 'access' })}
${
  input.created
    ? html`<section class="secret" aria-labelledby="new-key-title">
  <h2 id="new-key-title">${input.created.rotated ? 'Your replacement key (the old one is revoked)' : 'Your new API key'}</h2>
  <p id="new-key-hint">Copy it now: it is shown only once and stored only as a hash.</p>
  <label for="new-key">Key ${input.created.id}</label>
  <input id="new-key" type="text" readonly value="${input.created.key}" aria-describedby="new-key-hint" class="mono">
  <button type="button" data-copy="new-key" hidden>Copy</button>
</section>`
    : ''
}
${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
${errorBox('access-error', input.error)}
<section aria-labelledby="creds-title">
  <h2 id="creds-title">Keys and OAuth clients</h2>
  ${
    input.credentials.length === 0
      ? html`<p>None yet.</p>`
      : html`<div class="table-scroll"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Role</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${input.credentials.map((row) => credentialRow(form, row))}</tbody>
  </table></div>`
  }
</section>
${
  input.firstParty.length === 0
    ? ''
    : html`<section aria-labelledby="apps-title">
  <h2 id="apps-title">Sign-in apps of this installation</h2>
  <p id="apps-hint">People of every workspace sign in through these first-party clients, so only the operator adds or removes one.
  A person signed in through one acts with the lesser of their own role and the role shown here.
  You can end the sign-ins of ${input.workspaceName} through one: its people are signed out of it here, and can sign in again.</p>
  <div class="table-scroll"><table aria-describedby="apps-hint">
    <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Scopes</th><th scope="col">Registered</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${input.firstParty.map((row) => firstPartyRow(form, row))}</tbody>
  </table></div>
</section>`
}
<section aria-labelledby="create-title">
  <h2 id="create-title">Create an API key</h2>
  <form method="post" action="${prefix}/access/keys" class="stack">
    ${csrfField(form)}
    <label for="key-name">Name</label>
    <input id="key-name" name="name" type="text" maxlength="200" required>
    <label for="key-role">Role</label>
    <select id="key-role" name="role">${[...ROLES].reverse().map((role) => html`<option value="${role}"${role === 'member' ? html` selected` : ''}>${role}</option>`)}</select>
    <fieldset${input.error ? html` aria-describedby="access-error"` : ''}><legend>Scopes</legend>
      ${SCOPES.map(
        (scope) => html`<div class="choice">
        <input type="checkbox" id="new-scope-${scope}" name="scope" value="${scope}">
        <label for="new-scope-${scope}">${SCOPE_TEXT[scope]} <code>${scope}</code></label>
      </div>`,
      )}
    </fieldset>
    <button type="submit">Create key</button>
  </form>
</section>`;
}

function credentialRow(form: FormContext, row: CredentialListRow): Html {
  const label = row.name ?? row.id;
  return html`<tr>
    <td>${row.name ?? html`<span class="muted">unnamed</span>`} <code>${row.id}</code></td>
    <td>${row.kind === 'key' ? 'API key' : 'OAuth client'}</td>
    <td>${row.role}</td>
    <td>${row.scopes.join(' ')}</td>
    <td><time datetime="${row.createdAt.toISOString()}">${row.createdAt.toISOString().slice(0, 10)}</time></td>
    <td class="row-actions">
      ${row.kind === 'key' ? html`<form method="post" action="${form.prefix}/access/keys/${row.id}/rotate">${csrfField(form)}<button type="submit" class="secondary" aria-label="Rotate ${label}">Rotate</button></form>` : ''}
      <form method="get" action="${form.prefix}/access/credentials/${row.id}/delete"><button type="submit" class="danger" aria-label="Delete ${label}">Delete…</button></form>
    </td>
  </tr>`;
}

/** The confirmation a deletion needs: what goes, what stops working, and a stronger word for the last admin key. */
export function deleteView(
  form: FormContext,
  input: {
    workspaceName: string;
    who: { name: string; email: string };
    row: CredentialListRow;
    lastAdminKey: boolean;
    error: string | null;
  },
): Html {
  const { row } = input;
  const kind = row.kind === 'key' ? 'API key' : 'OAuth client';
  return html`<h1>Delete ${row.name ? html`the ${kind} “${row.name}”` : html`this ${kind}`}?</h1>
${appNav(form, { who: input.who, admin: true, current: 'access' })}
${errorBox('delete-error', input.error)}
<p>${kind} <code>${row.id}</code> of ${input.workspaceName}: role ${row.role}, scopes <code>${row.scopes.join(' ')}</code>.</p>
<p>Once deleted, every request made with it${row.kind === 'client' ? ' or with a token it issued' : ''} is refused at once
(<code>401 CREDENTIAL_REVOKED</code>), in every process. This cannot be undone: a program that uses it needs a new one.</p>
<form method="post" action="${form.prefix}/access/credentials/${row.id}/delete" class="stack">
  ${csrfField(form)}
  <input type="hidden" name="confirm" value="yes">
  ${
    input.lastAdminKey
      ? html`<div class="warning" role="alert" id="last-admin-key-warning">
    <p><strong>This is the only admin API key of ${input.workspaceName}.</strong> Without it, no program can manage the
    workspace's members, webhooks or keys through the API until an admin makes a new admin key here.</p>
  </div>
  <div class="choice">
    <input type="checkbox" id="last-admin-key" name="last-admin-key" value="understood" required aria-describedby="last-admin-key-warning${input.error ? ' delete-error' : ''}">
    <label for="last-admin-key">I understand: delete the only admin key</label>
  </div>`
      : ''
  }
  <button type="submit" class="danger">Delete ${row.name ?? row.id}</button>
</form>
<p><a href="${form.prefix}/access">Keep it and go back to API access</a></p>`;
}

function firstPartyRow(form: FormContext, row: CredentialListRow): Html {
  const label = row.name ?? row.id;
  return html`<tr>
    <td>${row.name ?? html`<span class="muted">unnamed</span>`} <code>${row.id}</code></td>
    <td>${row.role}</td>
    <td>${row.scopes.join(' ')}</td>
    <td><time datetime="${row.createdAt.toISOString()}">${row.createdAt.toISOString().slice(0, 10)}</time></td>
    <td class="row-actions">
      <form method="post" action="${form.prefix}/access/clients/${row.id}/end-signins">${csrfField(form)}<button type="submit" class="secondary" aria-label="End sign-ins through ${label}">End sign-ins</button></form>
    </td>
  </tr>`;
}

const STATE_TEXT = {
  expired: 'This invitation has expired. Ask the person who invited you to send a new one.',
  revoked: 'This invitation was withdrawn.',
  accepted: 'This invitation was already used. Sign in to reach the workspace.',
} as const;

export function inviteView(
  form: FormContext,
  input: {
    token: string;
    invite: InviteLink | null;
    signedInAs: { name: string; email: string } | null;
    error: string | null;
    field: 'name' | 'password' | null;
  },
): Html {
  const { invite } = input;
  if (!invite)
    return html`<h1>Invitation</h1><p>This invitation link is not valid. Check that you copied all of it.</p>`;
  if (invite.state !== 'pending') {
    return html`<h1>Invitation to ${invite.workspaceName}</h1><p>${STATE_TEXT[invite.state]}</p><p><a href="${form.prefix}/signin">Sign in</a></p>`;
  }
  const mine =
    input.signedInAs && input.signedInAs.email.toLowerCase() === invite.email.toLowerCase();
  const fieldError = (name: 'name' | 'password') =>
    input.error && input.field === name
      ? html` aria-describedby="invite-error" aria-invalid="true"`
      : html``;
  return html`<h1>Join ${invite.workspaceName}</h1>
<p>You are invited as <strong>${invite.role}</strong> with the address <strong>${invite.email}</strong>.</p>
${input.signedInAs && !mine ? signoutForm(form, input.signedInAs) : ''}
${errorBox('invite-error', input.error)}
<form method="post" action="${form.prefix}/invite" class="stack">
  ${csrfField(form)}
  <input type="hidden" name="token" value="${input.token}">
  ${
    mine
      ? html`<input type="hidden" name="mode" value="accept"><button type="submit">Join ${invite.workspaceName}</button>`
      : invite.hasAccount
        ? html`<input type="hidden" name="mode" value="signin">
  <p>You have an account: sign in to accept.</p>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${fieldError('password')}>
  <button type="submit">Sign in and join</button>`
        : html`<input type="hidden" name="mode" value="signup">
  <label for="name">Your name</label>
  <input id="name" name="name" type="text" autocomplete="name" required maxlength="200"${fieldError('name')}>
  <label for="password">Choose a password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${String(MIN_PASSWORD)}" maxlength="${String(MAX_PASSWORD)}" aria-describedby="password-hint${input.error && input.field === 'password' ? ' invite-error' : ''}">
  <p class="muted" id="password-hint">At least ${String(MIN_PASSWORD)} characters.</p>
  <button type="submit">Create account and join</button>`
  }
</form>`;
}
