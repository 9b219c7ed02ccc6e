/**
 * API access (keys and OAuth clients of the session's workspace, and the installation's
 * first-party clients, read-only) and invitation links. A new or rotated key's secret
 * appears once, on the page the form redirects to (a reload repeats the GET, never the post);
 * a deletion is confirmed on a page of its own first.
 */
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { DomainError, notFound } from '../../platform/errors.ts';
import { errorHeaders } from '../http/error-status.ts';
import { parseScopes, ROLES } from '../../services/auth/principal.ts';
import type { Reply, RequestContext, Route } from '../http/route.ts';
import {
  createAccessKey,
  deleteCredential,
  endClientSignins,
  listAccess,
  rotateAccessKey,
  type AccessContext,
} from '../../services/account/access.service.ts';
import { accessView, deleteView, inviteView } from './access.views.ts';
import {
  acceptAsSignedIn,
  acceptWithSignin,
  acceptWithSignup,
  inviteByLink,
} from '../../services/account/invite-links.service.ts';
import { count } from '../../platform/plural.ts';
import { appRoute, field, formFields, seeOther, signedIn, view, type AppDeps } from './render.ts';
import { checkCsrf, flashCookie, startSession, takeFlash, visitor } from './session.ts';
import { SigninThrottled } from '../../services/account/signin.service.ts';
import { messageView } from './signin.views.ts';

const COPY_SCRIPT = readFileSync(new URL('./copy.js', import.meta.url));
const ID = Type.Object({ id: Type.String({ pattern: '^(key|cli)_[A-Za-z0-9_-]{1,60}$' }) });
const CLIENT_ID = Type.Object({ id: Type.String({ pattern: '^cli_[A-Za-z0-9_-]{1,60}$' }) });

/** What the access page shows once, after a redirect: a new or rotated key's secret, or what was done. */
interface AccessFlash {
  created?: { id: string; key: string; rotated: boolean };
  notice?: string;
}

/** Whether deleting this credential leaves the workspace with no admin API key. */
function isLastAdminKey(
  credentials: { id: string; kind: string; role: string }[],
  id: string,
): boolean {
  const adminKeys = credentials.filter((c) => c.kind === 'key' && c.role === 'admin');
  return adminKeys.length === 1 && adminKeys[0]!.id === id;
}

export function accessRoutes(deps: AppDeps): Route[] {
  const { sql, names, prefix, auth } = deps;

  /** The signed-in visitor, the workspace the page is about, and what the access service needs; null when a sign-in is needed. */
  async function signedInAccess(ctx: Pick<RequestContext, 'headers'>) {
    const who = await signedIn(deps, ctx.headers);
    return (
      who && {
        ...who,
        access: {
          sql,
          auth,
          userId: who.v.session.userId,
          workspaceId: who.workspace.id,
        } satisfies AccessContext,
      }
    );
  }

  async function accessPage(
    ctx: Pick<RequestContext, 'headers'>,
    state: AccessFlash & { error?: string; status?: number; cookies?: string[] } = {},
  ): Promise<Reply> {
    const who = await signedInAccess(ctx);
    if (!who) return seeOther(`${prefix}/signin`);
    const org = who.workspace;
    if (!['owner', 'admin'].includes(org.role)) {
      return view(
        'API access',
        messageView(
          `API access: ${org.name}`,
          `You are ${org.role === 'member' ? 'a member' : 'a viewer'} of ${org.name}. Only admins manage API keys and clients.`,
          { href: prefix || '/', text: 'Back to your home page' },
        ),
        { status: 403, cookies: who.v.cookies },
      );
    }
    const { credentials, firstParty } = await listAccess(who.access);
    return view(
      'API access',
      accessView(
        { prefix, csrf: who.v.csrf },
        {
          workspaceName: org.name,
          credentials,
          firstParty,
          who: who.v.session,
          created: state.created ?? null,
          error: state.error ?? null,
          notice: state.notice ?? null,
        },
      ),
      {
        status: state.status ?? 200,
        cookies: [...who.v.cookies, ...(state.cookies ?? [])],
        scripts: [`${prefix}/copy.js`],
      },
    );
  }

  /** After a change, the page again by GET (a reload repeats nothing), with what to show once. */
  const backToAccess = (ctx: Pick<RequestContext, 'headers'>, flash: AccessFlash) =>
    seeOther(`${prefix}/access`, flashCookie(names, ctx.headers, flash));

  /** The page confirming a deletion (a plain form, no script needed); null when the credential is not this workspace's. */
  async function deletePage(
    ctx: Pick<RequestContext, 'headers'>,
    id: string,
    error: string | null = null,
  ): Promise<Reply> {
    const who = await signedInAccess(ctx);
    if (!who) return seeOther(`${prefix}/signin`);
    const { credentials } = await listAccess(who.access);
    const row = credentials.find((c) => c.id === id);
    if (!row) throw notFound('Key or client');
    return view(
      'Delete API access',
      deleteView(
        { prefix, csrf: who.v.csrf },
        {
          workspaceName: who.workspace.name,
          who: who.v.session,
          row,
          lastAdminKey: isLastAdminKey(credentials, id),
          error,
        },
      ),
      { status: error ? 400 : 200, cookies: who.v.cookies },
    );
  }

  /** Runs a form post of the access page for a signed-in admin. */
  const accessAction = async (
    ctx: Pick<RequestContext, 'headers' | 'rawBody'>,
    run: (access: AccessContext, fields: Map<string, string[]>) => Promise<Reply>,
  ): Promise<Reply> => {
    const fields = formFields(ctx);
    checkCsrf(names, ctx.headers, field(fields, 'csrf'));
    const who = await signedInAccess(ctx);
    if (!who) return seeOther(`${prefix}/signin`);
    return run(who.access, fields);
  };

  return [
    appRoute({
      method: 'GET',
      path: `${prefix}/access`,
      operationId: 'appAccess',
      summary: 'API access page',
      handler: (ctx) => {
        const flash = takeFlash<AccessFlash>(names, ctx.headers);
        return accessPage(ctx, { ...flash.value, cookies: flash.cookies });
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/access/keys`,
      operationId: 'appCreateKey',
      summary: 'Create an API key',
      handler: (ctx) =>
        accessAction(ctx, async (access, fields) => {
          const chosen = field(fields, 'role');
          const role = ROLES.find((known) => known === chosen);
          const scopes = parseScopes((fields.get('scope') ?? []).join(' '));
          const name = field(fields, 'name').trim().slice(0, 200);
          if (!role || !scopes || scopes.length === 0) {
            return accessPage(ctx, {
              error: 'Choose a role and at least one scope for the key.',
              status: 400,
            });
          }
          let created: { id: string; key: string };
          try {
            created = await createAccessKey(access, { name, role, scopes });
          } catch (error) {
            // A name with a control character: said on the page, with the form again.
            if (!(error instanceof DomainError) || error.code !== 'VALIDATION_FAILED') throw error;
            return accessPage(ctx, { error: error.message, status: 400 });
          }
          return backToAccess(ctx, { created: { ...created, rotated: false } });
        }),
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/access/keys/{id}/rotate`,
      operationId: 'appRotateKey',
      summary: 'Rotate an API key',
      params: ID,
      handler: (ctx) =>
        accessAction(ctx, async (access) => {
          const rotated = await rotateAccessKey(access, ctx.params.id);
          return backToAccess(ctx, { created: { ...rotated, rotated: true } });
        }),
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/access/credentials/{id}/delete`,
      operationId: 'appConfirmDeleteCredential',
      summary: 'Confirm deleting a key or client',
      params: ID,
      handler: (ctx) => deletePage(ctx, ctx.params.id),
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/access/credentials/{id}/delete`,
      operationId: 'appDeleteCredential',
      summary: 'Delete a key or client',
      params: ID,
      handler: (ctx) =>
        accessAction(ctx, async (access, fields) => {
          const { id } = ctx.params;
          const { credentials } = await listAccess(access);
          const row = credentials.find((c) => c.id === id);
          // Not the workspace's to delete: the service says why (404, or 403 for a first-party client).
          if (!row) await deleteCredential(access, id);
          // Only the confirmation page's form deletes; anything else is shown that page first.
          if (field(fields, 'confirm') !== 'yes')
            return seeOther(`${prefix}/access/credentials/${id}/delete`);
          if (
            row &&
            isLastAdminKey(credentials, id) &&
            field(fields, 'last-admin-key') !== 'understood'
          ) {
            return deletePage(
              ctx,
              id,
              'This is the only admin key of the workspace: tick the box to say you mean to delete it.',
            );
          }
          await deleteCredential(access, id);
          const what = `${row?.kind === 'client' ? 'OAuth client' : 'API key'} ${row?.name ? `${row.name} (${id})` : id}`;
          return backToAccess(ctx, {
            notice: `Deleted the ${what}: ${row?.kind === 'client' ? 'it and every token it issued are' : 'it is'} refused from now on (401 CREDENTIAL_REVOKED).`,
          });
        }),
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/access/clients/{id}/end-signins`,
      operationId: 'appEndClientSignins',
      summary: "End the workspace's sign-ins through a first-party client",
      params: CLIENT_ID,
      handler: (ctx) =>
        accessAction(ctx, async (access) => {
          const ended = await endClientSignins(access, ctx.params.id);
          return accessPage(ctx, {
            notice: `Ended the sign-ins through ${ended.name} in this workspace (${count(ended.people, 'person', 'people')} signed out).`,
          });
        }),
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/copy.js`,
      operationId: 'appCopyScript',
      summary: 'Copy buttons (progressive enhancement)',
      handler: () => ({
        status: 200,
        body: COPY_SCRIPT,
        contentType: 'text/javascript; charset=utf-8',
        headers: { 'Cache-Control': 'public, max-age=3600' },
      }),
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/invite`,
      operationId: 'appInvite',
      summary: 'Invitation page',
      handler: async ({ headers, query }) => {
        const v = await visitor(sql, names, headers);
        const token = typeof query.token === 'string' ? query.token : '';
        const invite = await inviteByLink(sql, token);
        const status = !invite ? 404 : invite.state === 'pending' ? 200 : 410;
        return view(
          'Invitation',
          inviteView(
            { prefix, csrf: v.csrf },
            { token, invite, signedInAs: v.session, error: null, field: null },
          ),
          { status, cookies: v.cookies },
        );
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/invite`,
      operationId: 'appInviteAccept',
      summary: 'Accept an invitation (sign up or sign in)',
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const v = await visitor(sql, names, ctx.headers);
        const token = field(fields, 'token');
        const mode = field(fields, 'mode');
        const again = async (
          status: number,
          error: string,
          which: 'name' | 'password' | null,
          headers: Record<string, string> = {},
        ) => {
          const reply = view(
            'Invitation',
            inviteView(
              { prefix, csrf: v.csrf },
              {
                token,
                invite: await inviteByLink(sql, token),
                signedInAs: v.session,
                error,
                field: which,
              },
            ),
            { status },
          );
          return { ...reply, headers: { ...reply.headers, ...headers } };
        };
        if (mode === 'accept' && v.session) {
          const invite = await acceptAsSignedIn(sql, token, {
            id: v.session.userId,
            email: v.session.email,
          });
          const session = await startSession(
            sql,
            names,
            v.sessionHash,
            v.session.userId,
            invite.workspaceId,
          );
          return seeOther(prefix || '/', session.cookies);
        }
        let joined: { userId: string; invite: { workspaceId: string } } | null;
        try {
          joined =
            mode === 'signup'
              ? await acceptWithSignup(sql, token, {
                  name: field(fields, 'name'),
                  password: field(fields, 'password'),
                })
              : await acceptWithSignin(sql, token, {
                  password: field(fields, 'password'),
                  address: ctx.remoteAddress,
                });
        } catch (error) {
          if (error instanceof SigninThrottled)
            return again(429, error.message, 'password', errorHeaders(error));
          if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') {
            return again(
              400,
              error.message,
              (error.details?.field as 'name' | 'password' | undefined) ?? null,
            );
          }
          throw error;
        }
        if (!joined) return again(401, 'That password is not right.', 'password');
        const session = await startSession(
          sql,
          names,
          v.sessionHash,
          joined.userId,
          joined.invite.workspaceId,
        );
        return seeOther(prefix || '/', session.cookies);
      },
    }),
  ];
}
