/**
 * The home page every signed-in person lands on (their work, their workspaces, where to go
 * next) and their notification settings page, which the emails' footer links to.
 */
import { DomainError } from '../../platform/errors.ts';
import type { Reply, RequestContext, Route } from '../http/route.ts';
import { homeWork } from '../../services/account/home.service.ts';
import { ownSettings, saveOwnSettings } from '../../services/notifications/preferences.service.ts';
import {
  appRoute,
  chosenWorkspace,
  field,
  formFields,
  seeOther,
  signedIn,
  signedInPerson,
  view,
  type AppDeps,
} from './render.ts';
import { checkCsrf } from './session.ts';
import { homeView, settingsView } from './home.views.ts';

/** Every zone Intl knows, UTC first: the settings page's choices. */
const ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];

export function homeRoutes(deps: AppDeps): Route[] {
  const { sql, names, prefix, work } = deps;

  async function settingsPage(
    headers: RequestContext['headers'],
    asked: string,
    state: { error?: string; notice?: string; status?: number } = {},
  ): Promise<Reply> {
    const who = await signedIn(deps, headers, asked);
    if (!who) return seeOther(`${prefix}/signin`);
    const { settings, flows } = await ownSettings(sql, who.workspace.id, who.v.session.userId);
    const zones = ZONES.includes(settings.timezone) ? ZONES : [settings.timezone, ...ZONES];
    return view(
      'Notification settings',
      settingsView(
        { prefix, csrf: who.v.csrf },
        {
          who: who.v.session,
          workspace: who.workspace,
          settings,
          flows,
          zones,
          error: state.error ?? null,
          notice: state.notice ?? null,
        },
      ),
      { status: state.status ?? 200, cookies: who.v.cookies },
    );
  }

  return [
    appRoute({
      method: 'GET',
      path: prefix || '/',
      operationId: 'appHome',
      summary: 'Home: your work and workspaces when signed in, else sign-in',
      handler: async ({ headers }) => {
        const person = await signedInPerson(deps, headers);
        if (!person) return seeOther(`${prefix}/signin`);
        const workspace = chosenWorkspace(person);
        // A guest of no workspace of their own: what is shared with them is their home.
        if (!workspace) return seeOther(`${prefix}/flows`);
        const who = { ...person, workspace };
        const mine = await homeWork(work, who.workspace.id, who.v.session.userId);
        return view(
          'Home',
          homeView(
            { prefix, csrf: who.v.csrf },
            { who: who.v.session, workspace: who.workspace, workspaces: who.orgs, work: mine },
          ),
          { cookies: who.v.cookies },
        );
      },
    }),
    appRoute({
      method: 'GET',
      path: `${prefix}/notifications`,
      operationId: 'appNotifications',
      summary: 'Notification settings page',
      handler: ({ headers, query }) =>
        settingsPage(headers, typeof query.workspace === 'string' ? query.workspace : ''),
    }),
    appRoute({
      method: 'POST',
      path: `${prefix}/notifications`,
      operationId: 'appNotificationsSave',
      summary: 'Save notification settings',
      handler: async (ctx) => {
        const fields = formFields(ctx);
        checkCsrf(names, ctx.headers, field(fields, 'csrf'));
        const asked = field(fields, 'workspace');
        const who = await signedIn(deps, ctx.headers, asked);
        if (!who) return seeOther(`${prefix}/signin`);
        const on = (name: string) => field(fields, name) === 'on';
        try {
          await saveOwnSettings(sql, who.workspace.id, who.v.session.userId, {
            email: on('email'),
            events: { assigned: on('assigned'), unlocked: on('unlocked'), digest: on('digest') },
            timezone: field(fields, 'timezone'),
            digestHour: Number(field(fields, 'digestHour') || Number.NaN),
            muted: new Set(fields.get('muted') ?? []),
          });
        } catch (error) {
          if (!(error instanceof DomainError) || error.code !== 'VALIDATION_FAILED') throw error;
          return settingsPage(ctx.headers, asked, {
            error: `Not saved: ${error.message}`,
            status: 400,
          });
        }
        return settingsPage(ctx.headers, asked, { notice: 'Saved.' });
      },
    }),
  ];
}
