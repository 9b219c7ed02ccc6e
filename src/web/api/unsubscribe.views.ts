/**
 * The unsubscribe pages: GET only asks (a button that POSTs), so link scanners and mail
 * previews unsubscribe nobody; POST does it (also RFC 8058's one-click POST from the mail
 * client) and confirms.
 */
import { html } from '../../platform/html.ts';
import { page } from '../http/page.ts';
import type { DomainError } from '../../platform/errors.ts';
import { errorHeaders } from '../http/error-status.ts';
import type { Reply } from '../http/route.ts';
import type { UnsubscribeKind } from '../../services/notifications/unsubscribe.ts';

const WHAT: Record<UnsubscribeKind, string> = {
  batch: 'emails about tasks assigned to you and tasks of yours that are ready to start',
  digest: 'the morning digest',
};

/** `a…@example.com`: enough for the owner to recognise, little for someone the link was forwarded to. */
function masked(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}…${email.slice(at)}`;
}

export function confirmPage(kind: UnsubscribeKind, email: string): Reply {
  return page({
    title: 'Unsubscribe',
    body: html`<h1>Unsubscribe?</h1>
<p>Stop sending ${WHAT[kind]} to <strong>${masked(email)}</strong>.</p>
<form method="post"><button type="submit">Unsubscribe</button></form>
<p>Other notification emails are not affected.</p>`,
  });
}

export function donePage(kind: UnsubscribeKind, email: string): Reply {
  return page({
    title: 'Unsubscribed',
    body: html`<h1>You are unsubscribed</h1>
<p>We no longer send ${WHAT[kind]} to <strong>${masked(email)}</strong>. You can switch them back on in your notification preferences.</p>`,
  });
}

/** Refusals as pages: an unknown or malformed link, or too many requests from one address. */
export function errorPage(error: DomainError): Reply {
  const reply =
    error.code === 'RATE_LIMITED'
      ? page({
          title: 'Too many requests',
          status: 429,
          body: html`<h1>Too many requests</h1><p>Try again in a minute.</p>`,
        })
      : page({
          title: 'Link not found',
          status: 404,
          body: html`<h1>This unsubscribe link is not valid</h1><p>It may have been copied incompletely. Use the link in your most recent email.</p>`,
        });
  const headers = errorHeaders(error);
  return headers ? { ...reply, headers: { ...reply.headers, ...headers } } : reply;
}
