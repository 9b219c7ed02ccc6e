/**
 * The invitation email: who invites the person to which workspace, with which role, and the
 * single-use link to accept (sign up, or sign in with an existing account). A failed send is
 * logged, not thrown: the invite stands, and inviting the address again sends a fresh link.
 */
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.ts';
import { html, oneLine } from '../../platform/html.ts';
import { mailDocument, mailStyle } from '../mail/layout.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Sql } from '../../storage/db.ts';
import { findWorkspace } from '../../storage/workspaces.store.ts';
import type { InviteDelivery } from './invites.service.ts';

export function inviteDelivery(deps: {
  sql: Sql;
  config: Config;
  mailer: Mailer;
  log: Logger;
}): InviteDelivery {
  return async (invite) => {
    const workspace = await findWorkspace(deps.sql, invite.workspaceId);
    const name = workspace?.name ?? 'a flowplan workspace';
    // The subject is one header line: a name stored before names were held to one line is drawn on one.
    const subject = `You are invited to ${oneLine(name)} on flowplan`;
    const link = `${deps.config.appUrl}/invite?token=${invite.token}`;
    const until = invite.expiresAt.toUTCString();
    try {
      await deps.mailer.send({
        to: invite.email,
        subject,
        // The link on a line of its own, so a client's link detection takes it whole.
        text: `You are invited to join ${name} on flowplan as ${invite.role}.\n\nAccept the invitation (the link works once, until ${until}):\n${link}\n\nIf you did not expect this, ignore this email.\n`,
        html: mailDocument({
          title: subject,
          body: html`<p style="${mailStyle.p}">You are invited to join <strong>${name}</strong> on flowplan as <strong>${invite.role}</strong>.</p>
<p style="${mailStyle.p}"><a href="${link}" style="${mailStyle.button}">Accept the invitation</a></p>
<p style="${mailStyle.p}">Or open this address in your browser:<br><a href="${link}" style="${mailStyle.url}">${link}</a></p>`,
          footer: html`<p style="margin: 0">The link works once, until ${until}. If you did not expect this, ignore this email.</p>`,
        }),
      });
    } catch (error) {
      deps.log.error({ err: error, to: invite.email }, 'invitation email not sent');
    }
  };
}
