/**
 * Invite acceptance through the single-use link an invite email carries: the link proves the
 * address, so a person without an account signs up there, one with an account signs in, and
 * either way takes the invite's seat with its role.
 */
import { DomainError, inviteClosed, notFound } from '../../platform/errors.ts';
import { nameProblem } from '../../contract/common.schema.ts';
import { createUser, MAX_NAME_LENGTH } from '../auth/provision.ts';
import { sha256 } from '../auth/secrets.ts';
import type { Sql } from '../../storage/db.ts';
import { findInviteByToken, type InviteLinkRow } from '../../storage/people.store.ts';
import { findUserByEmail } from '../../storage/workspaces.store.ts';
import { acceptInvite } from '../team/invites.service.ts';
import { checkPassword } from './signin.service.ts';
import { newPasswordProblem } from './password.ts';

export type InviteState = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface InviteLink extends InviteLinkRow {
  state: InviteState;
}

export async function inviteByLink(sql: Sql, token: string): Promise<InviteLink | null> {
  if (!/^inv_[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await findInviteByToken(sql, sha256(token));
  if (!row) return null;
  const expired =
    row.status === 'pending' && row.expiresAt !== null && row.expiresAt.getTime() <= Date.now();
  return { ...row, state: expired ? 'expired' : row.status };
}

async function pendingInvite(sql: Sql, token: string): Promise<InviteLink> {
  const invite = await inviteByLink(sql, token);
  if (!invite) throw notFound('Invite');
  if (invite.state !== 'pending') throw inviteClosed(invite.state);
  return invite;
}

/** Joins the workspace as the person already signed in, when the invite is to their address. */
export async function acceptAsSignedIn(
  sql: Sql,
  token: string,
  user: { id: string; email: string },
): Promise<InviteLink> {
  const invite = await pendingInvite(sql, token);
  if (invite.email.toLowerCase() !== user.email.toLowerCase()) {
    throw new DomainError(
      'FORBIDDEN',
      `This invitation is for ${invite.email}; sign out and open the link again to accept it`,
    );
  }
  await acceptInvite(sql, {
    workspaceId: invite.workspaceId,
    inviteId: invite.id,
    userId: user.id,
  });
  return invite;
}

/** A new account for the invited address, then the invite is accepted. */
export async function acceptWithSignup(
  sql: Sql,
  token: string,
  input: { name: string; password: string },
): Promise<{ userId: string; invite: InviteLink }> {
  const invite = await pendingInvite(sql, token);
  if (await findUserByEmail(sql, invite.email)) {
    throw new DomainError(
      'VALIDATION_FAILED',
      'An account with this email exists already: sign in to accept',
      { field: 'password' },
    );
  }
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH)
    throw new DomainError(
      'VALIDATION_FAILED',
      `Give your name (up to ${MAX_NAME_LENGTH} characters)`,
      { field: 'name' },
    );
  // Shown to the workspace (assignees, comments) and in mail to others: held to the rules of every name.
  const nameWrong = nameProblem(name, MAX_NAME_LENGTH);
  if (nameWrong)
    throw new DomainError('VALIDATION_FAILED', `Your name ${nameWrong}`, { field: 'name' });
  const problem = newPasswordProblem(input.password);
  if (problem)
    throw new DomainError('VALIDATION_FAILED', `${problem}: choose another`, { field: 'password' });
  const { id } = await createUser(sql, { email: invite.email, name, password: input.password });
  await acceptInvite(sql, { workspaceId: invite.workspaceId, inviteId: invite.id, userId: id });
  return { userId: id, invite };
}

/** The invited person signs in with their existing account's password, then accepts. */
export async function acceptWithSignin(
  sql: Sql,
  token: string,
  input: { password: string; address: string },
): Promise<{ userId: string; invite: InviteLink } | null> {
  const invite = await pendingInvite(sql, token);
  const user = await checkPassword(sql, {
    email: invite.email,
    password: input.password,
    address: input.address,
  });
  if (!user) return null;
  await acceptInvite(sql, {
    workspaceId: invite.workspaceId,
    inviteId: invite.id,
    userId: user.id,
  });
  return { userId: user.id, invite };
}
