/**
 * A member's notifications as the API shows them (CONTRACT §3): preferences (account-level
 * settings per member and workspace, and per-flow `muted` overrides, answered resolved:
 * defaults filled in, override applied), the deliveries sent, and the digest as it would go
 * now. Anyone with notifications:read in the workspace may read a member's; changing another
 * member's preferences needs admin.
 */
import type { Static } from '@sinclair/typebox';
import type {
  PatchPreferencesBody,
  PreferencesQuery,
  PreferencesSchema,
} from '../../contract/notification.schema.ts';
import { roleAtLeast, type Principal } from '../auth/principal.ts';
import {
  notFound,
  roleRequired,
  validationFailed,
  type ValidationProblem,
} from '../../platform/errors.ts';
import type { Sql } from '../../storage/db.ts';
import type { PageRequest } from '../../platform/paging.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import { deliveryView } from './deliveries.service.ts';
import { buildDigest } from './digest.ts';
import {
  flowInWorkspace,
  flowMuted,
  liveFlowNames,
  loadSettings,
  lockSettings,
  mutedFlows,
  postgresKnowsZone,
  saveSettings,
  setFlowMuted,
  type SettingsRow,
} from '../../storage/notification-preferences.store.ts';
import { memberEmail } from '../../storage/members.store.ts';
import { pageDeliveries } from '../../storage/notification-deliveries.store.ts';

export interface NotificationContext {
  sql: Sql;
  registry: SessionRegistry;
  principal: Principal;
}

type PreferencesTarget = Static<typeof PreferencesQuery>;
type PreferencesPatch = Static<typeof PatchPreferencesBody>;

export function resolved(
  memberId: string,
  flowId: string | null,
  s: SettingsRow,
  muted: boolean | null,
): Static<typeof PreferencesSchema> {
  return {
    memberId,
    flowId,
    email: s.email,
    ...(flowId ? { muted: muted ?? false } : {}),
    events: { assigned: s.assigned, unlocked: s.unlocked, digest: s.digest },
    timezone: s.timezone,
    digestHour: s.digestHour,
  };
}

/**
 * The canonical IANA name of a zone both Intl and Postgres know (the schedule converts in
 * Postgres), or null. Offsets like `+01:00` are refused: Postgres reads them with POSIX's
 * inverted sign.
 */
export async function canonicalZone(sql: Sql, name: string): Promise<string | null> {
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(name)) return null;
  let zone: string;
  try {
    zone = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return (await postgresKnowsZone(sql, zone)) ? zone : null;
}

export async function checkMember(
  { sql, principal }: NotificationContext,
  memberId: string,
): Promise<{ email: string; name: string }> {
  const member = await memberEmail(sql, principal.workspaceId, memberId);
  if (!member) throw notFound('Member');
  return member;
}

/**
 * What was mailed to a person, and what their digest holds, is theirs: another member's needs
 * the admin role (docs/security.md), as changing their preferences does.
 */
function requireSelfOrAdmin(principal: Principal, memberId: string, what: string): void {
  if (principal.userId !== memberId && !roleAtLeast(principal.role, 'admin')) {
    throw roleRequired('admin', principal.role, what);
  }
}

async function checkTarget(ctx: NotificationContext, target: PreferencesTarget): Promise<void> {
  const { sql, principal } = ctx;
  await checkMember(ctx, target.memberId);
  if (target.flowId && !(await flowInWorkspace(sql, principal.workspaceId, target.flowId)))
    throw notFound('Flow');
}

export async function getPreferences(ctx: NotificationContext, target: PreferencesTarget) {
  const { sql, principal } = ctx;
  await checkTarget(ctx, target);
  const settings = await loadSettings(sql, principal.workspaceId, target.memberId);
  const muted = target.flowId
    ? await flowMuted(sql, principal.workspaceId, target.memberId, target.flowId)
    : null;
  return resolved(target.memberId, target.flowId ?? null, settings, muted);
}

export async function updatePreferences(
  ctx: NotificationContext,
  target: PreferencesTarget,
  patch: PreferencesPatch,
) {
  const { sql, principal } = ctx;
  requireSelfOrAdmin(
    principal,
    target.memberId,
    "Changing another member's notification preferences",
  );
  const timezone =
    patch.timezone === undefined ? undefined : await canonicalZone(sql, patch.timezone);
  checkFields(target, patch, timezone);
  await checkTarget(ctx, target);
  const { workspaceId } = principal;
  if (target.flowId) {
    await setFlowMuted(sql, workspaceId, target.memberId, target.flowId, patch.muted!);
    return resolved(
      target.memberId,
      target.flowId,
      await loadSettings(sql, workspaceId, target.memberId),
      patch.muted!,
    );
  }
  const settings = await applySettings(
    sql,
    workspaceId,
    target.memberId,
    patch,
    timezone ?? undefined,
  );
  return resolved(target.memberId, null, settings, null);
}

/** Writes the account-level fields of a patch over the member's current settings (a zone already made canonical). */
async function applySettings(
  sql: Sql,
  workspaceId: string,
  memberId: string,
  patch: PreferencesPatch,
  timezone: string | undefined,
): Promise<SettingsRow> {
  return sql.begin(async (tx) => {
    const current = await lockSettings(tx, workspaceId, memberId);
    const next: SettingsRow = {
      email: patch.email ?? current.email,
      assigned: patch.events?.assigned ?? current.assigned,
      unlocked: patch.events?.unlocked ?? current.unlocked,
      digest: patch.events?.digest ?? current.digest,
      timezone: timezone ?? current.timezone,
      digestHour: patch.digestHour ?? current.digestHour,
    };
    await saveSettings(tx, workspaceId, memberId, next);
    return next;
  });
}

/** The flows a settings page lists to mute, at most. */
export const MUTABLE_FLOWS_SHOWN = 500;

/** A person's own notification settings in a workspace, as the app's settings page shows them: every live flow with whether they muted it. */
export async function ownSettings(sql: Sql, workspaceId: string, userId: string) {
  const [settings, muted, flows] = await Promise.all([
    loadSettings(sql, workspaceId, userId),
    mutedFlows(sql, workspaceId, userId),
    liveFlowNames(sql, workspaceId, MUTABLE_FLOWS_SHOWN),
  ]);
  return { settings, flows: flows.map((flow) => ({ ...flow, muted: muted.has(flow.id) })) };
}

/**
 * A person's own settings from the app's form: every field given (a form sends them all), and
 * the flows listed with the ones ticked muted. The same rules as the API's PATCH; nothing is
 * written when a field is refused.
 */
export async function saveOwnSettings(
  sql: Sql,
  workspaceId: string,
  userId: string,
  form: {
    email: boolean;
    events: { assigned: boolean; unlocked: boolean; digest: boolean };
    timezone: string;
    digestHour: number;
    muted: ReadonlySet<string>;
  },
): Promise<void> {
  const timezone = await canonicalZone(sql, form.timezone);
  const problems: ValidationProblem[] = [];
  if (timezone === null)
    problems.push({
      in: 'body',
      pointer: '/timezone',
      message: `unknown time zone ${JSON.stringify(form.timezone)}: use an IANA name such as Europe/Berlin`,
    });
  if (!Number.isInteger(form.digestHour) || form.digestHour < 0 || form.digestHour > 23)
    problems.push({
      in: 'body',
      pointer: '/digestHour',
      message: 'the digest hour is a whole hour from 0 to 23',
    });
  if (problems.length > 0)
    throw validationFailed(problems, problems.map((p) => p.message).join('; '));
  await applySettings(
    sql,
    workspaceId,
    userId,
    { email: form.email, events: form.events, digestHour: form.digestHour },
    timezone!,
  );
  const { flows } = await ownSettings(sql, workspaceId, userId);
  for (const flow of flows)
    if (flow.muted !== form.muted.has(flow.id))
      await setFlowMuted(sql, workspaceId, userId, flow.id, form.muted.has(flow.id));
}

/** The body's fields must fit the level asked for; a zone must be one the tz database knows. */
function checkFields(
  target: PreferencesTarget,
  patch: PreferencesPatch,
  timezone: string | null | undefined,
): void {
  const problems: ValidationProblem[] = [];
  const problem = (pointer: string, message: string) =>
    problems.push({ in: 'body', pointer, message });
  if (target.flowId) {
    for (const k of ['email', 'events', 'timezone', 'digestHour'] as const) {
      if (patch[k] !== undefined)
        problem(`/${k}`, 'a flow-level change (flowId in the query) takes only `muted`');
    }
    if (patch.muted === undefined)
      problem('/muted', 'a flow-level change (flowId in the query) needs `muted`');
  } else if (patch.muted !== undefined) {
    problem('/muted', '`muted` is set per flow: give `flowId` in the query');
  }
  if (timezone === null) {
    problem(
      '/timezone',
      `unknown time zone ${JSON.stringify(patch.timezone)}: use an IANA name such as Europe/Berlin`,
    );
  }
  if (problems.length > 0) throw validationFailed(problems);
}

/** A member's deliveries, newest first (a member of the caller's workspace, else 404). */
export async function memberDeliveries(
  ctx: NotificationContext,
  memberId: string,
  request: PageRequest,
) {
  requireSelfOrAdmin(ctx.principal, memberId, "Reading another member's deliveries");
  await checkMember(ctx, memberId);
  const page = await pageDeliveries(ctx.sql, ctx.principal.workspaceId, memberId, request);
  return { total: page.total, items: page.items.map(deliveryView) };
}

/** The digest the member would get now, delivered to nobody. */
export async function digestPreview(ctx: NotificationContext, memberId: string, now = new Date()) {
  requireSelfOrAdmin(ctx.principal, memberId, "Reading another member's digest");
  await checkMember(ctx, memberId);
  return buildDigest(ctx.sql, ctx.registry, ctx.principal.workspaceId, memberId, now);
}
