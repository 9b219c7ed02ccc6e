/**
 * Sign-in, consent, workspace picker and sign-out. The authorize request travels only as
 * its opaque handle; where the browser goes after consent comes from the stored request
 * (a redirect URI the client registered), never from anything the browser sent.
 */
import { DomainError, noWorkspaceYet, signInRequestExpired } from '../../platform/errors.ts';
import { errorHeaders } from '../http/error-status.ts';
import {
  decideAuthorization,
  pendingAuthorization,
} from '../../services/auth/authorization-endpoint.ts';
import type { Route } from '../http/route.ts';
import { workspacesOf } from '../../services/team/members.service.ts';
import { appRoute, field, formFields, isAppPath, seeOther, view, type AppDeps } from './render.ts';
import { checkCsrf, chooseWorkspace, endSession, startSession, visitor } from './session.ts';
import {
  checkPassword,
  prepareSignin,
  SigninThrottled,
} from '../../services/account/signin.service.ts';
import { consentView, pickerView, signinView } from './signin.views.ts';

const query = (value: unknown) => (typeof value === 'string' ? value : '');

export function signinRoutes(deps: AppDeps): Route[] {
  const { sql, names, prefix, issuer } = deps;
  prepareSignin();
  /** Where a person lands once signed in: the app page they were sent from, else home. */
  const home = prefix || '/';
  const landing = (next: string) => (isAppPath(prefix, next) ? next : home);
  const consentPath = (request: string) =>
    `${prefix}/consent?request=${encodeURIComponent(request)}`;
  return [
    appRoute({
      method: 'GET',
      path: `${prefix}/signin`,
      operationId: 'appSignin',
      summary: 'Sign-in page',
      handler: async ({ headers, query: q }) => {
        const v = await visitor(sql, names, headers);
        const request = query(q.request) || null;
        const pending = request ? await pendingAuthorization(sql, request) : null;
        if (request && !pending) throw signInRequestExpired();
        const next = query(q.next);
        if (v.session) return seeOther(request ? consentPath(request) : landing(next), v.cookies);
        const notice = q.signedout ? 'You are signed out.' : null;
        return view(
          'Sign in',
          signinView(
            { prefix, csrf: v.csrf },
            {
              request,
              next: isAppPath(prefix, next) ? next : null,
              clientName: pending?.clientName ?? null,
              email: '',
              error: null,
              notice,
            },
          ),
          { cookies: v.cookies },
        );
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/signin`,
      operationId: 'appSigninSubmit',
      summary: 'Sign in with email and password',
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const v = await visitor(sql, names, ctx.headers);
        const request = field(fields, 'request') || null;
        const pending = request ? await pendingAuthorization(sql, request) : null;
        if (request && !pending) throw signInRequestExpired();
        const email = field(fields, 'email').trim();
        const next = field(fields, 'next');
        const again = (status: number, error: string, headers: Record<string, string> = {}) => {
          const reply = view(
            'Sign in',
            signinView(
              { prefix, csrf: v.csrf },
              {
                request,
                next: isAppPath(prefix, next) ? next : null,
                clientName: pending?.clientName ?? null,
                email,
                error,
                notice: null,
              },
            ),
            { status },
          );
          return { ...reply, headers: { ...reply.headers, ...headers } };
        };
        let user;
        try {
          user = await checkPassword(sql, {
            email,
            password: field(fields, 'password'),
            address: ctx.remoteAddress,
          });
        } catch (error) {
          if (error instanceof SigninThrottled)
            return again(429, error.message, errorHeaders(error));
          if (error instanceof DomainError && error.code === 'VALIDATION_FAILED')
            return again(400, error.message);
          throw error;
        }
        if (!user) return again(401, 'That email and password do not match an account.');
        const orgs = await workspacesOf(sql, user.id);
        const session = await startSession(sql, names, v.sessionHash, user.id, orgs[0]?.id ?? null);
        return seeOther(request ? consentPath(request) : landing(next), session.cookies);
      },
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/consent`,
      operationId: 'appConsent',
      summary: 'Consent page',
      handler: async ({ headers, query: q }) => {
        const v = await visitor(sql, names, headers);
        const request = query(q.request);
        const pending = await pendingAuthorization(sql, request);
        if (!pending) throw signInRequestExpired();
        if (!v.session)
          return seeOther(`${prefix}/signin?request=${encodeURIComponent(request)}`, v.cookies);
        const orgs = await workspacesOf(sql, v.session.userId);
        if (orgs.length === 0) throw noWorkspaceYet();
        return view(
          'Allow access',
          consentView(
            { prefix, csrf: v.csrf },
            {
              request,
              clientName: pending.clientName ?? pending.clientId,
              scopes: pending.scopes,
              orgs,
              workspaceId: v.session.workspaceId,
              who: v.session,
              error: null,
            },
          ),
          { cookies: v.cookies, formTarget: pending.redirectUri },
        );
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/consent`,
      operationId: 'appConsentSubmit',
      summary: 'Allow or deny a client',
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const v = await visitor(sql, names, ctx.headers);
        const request = field(fields, 'request');
        if (!v.session) return seeOther(`${prefix}/signin?request=${encodeURIComponent(request)}`);
        const approve = field(fields, 'decision') === 'approve';
        const scopes = fields.get('scope') ?? [];
        const pending = await pendingAuthorization(sql, request);
        if (!pending) throw signInRequestExpired();
        if (approve && !pending.scopes.some((scope) => scopes.includes(scope))) {
          const orgs = await workspacesOf(sql, v.session.userId);
          return view(
            'Allow access',
            consentView(
              { prefix, csrf: v.csrf },
              {
                request,
                clientName: pending.clientName ?? pending.clientId,
                scopes: pending.scopes,
                orgs,
                workspaceId: field(fields, 'workspace'),
                who: v.session,
                error: 'Tick at least one permission to allow, or choose Deny.',
              },
            ),
            { status: 400, formTarget: pending.redirectUri },
          );
        }
        const location = await decideAuthorization(sql, issuer, {
          handle: request,
          userId: v.session.userId,
          workspaceId: field(fields, 'workspace'),
          approve,
          scopes,
        });
        return seeOther(location);
      },
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/workspaces`,
      operationId: 'appWorkspaces',
      summary: 'Workspace picker',
      handler: async ({ headers }) => {
        const v = await visitor(sql, names, headers);
        if (!v.session) return seeOther(`${prefix}/signin`, v.cookies);
        const orgs = await workspacesOf(sql, v.session.userId);
        return view(
          'Workspaces',
          pickerView(
            { prefix, csrf: v.csrf },
            { orgs, workspaceId: v.session.workspaceId, who: v.session },
          ),
          { cookies: v.cookies },
        );
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/workspaces`,
      operationId: 'appWorkspacesSubmit',
      summary: 'Choose a workspace',
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const v = await visitor(sql, names, ctx.headers);
        if (!v.session || !v.sessionHash) return seeOther(`${prefix}/signin`);
        const workspaceId = field(fields, 'workspace');
        await chooseWorkspace(sql, v.sessionHash, v.session.userId, workspaceId);
        return seeOther(home);
      },
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/signout`,
      operationId: 'appSignout',
      summary: 'Sign out',
      handler: async (ctx) => {
        checkCsrf(names, ctx.headers, field(formFields(ctx), 'csrf'));
        const v = await visitor(sql, names, ctx.headers);
        return seeOther(
          `${prefix}/signin?signedout=1`,
          await endSession(sql, names, v.sessionHash),
        );
      },
    }),
  ];
}
