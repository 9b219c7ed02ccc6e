/**
 * Notification emails: plain text and HTML alternatives (every user-written value escaped by
 * `html`), with RFC 8058 one-click unsubscribe headers pointing at an opaque per-member,
 * per-kind link.
 */
import { html, oneLine, type Html } from '../../platform/html.ts';
import { count } from '../../platform/plural.ts';
import { mailDocument, mailLink, mailStyle } from '../mail/layout.ts';
import type { StoredMessage } from '../../storage/notification-deliveries.store.ts';
import type { Digest, DigestItem } from './digest.ts';

export interface BatchItem {
  kind: 'assigned' | 'unlocked';
  taskId: string;
  taskName: string;
  flowId: string;
  flowName: string;
}

export interface Envelope {
  to: string;
  name: string;
  unsubscribeUrl: string;
  /** The app's notification settings page for this workspace (linked from the footer). */
  settingsUrl: string;
  /** `{app_url}`: each task links to itself on its flow's page there. */
  appUrl: string;
}

/** A task on its flow's page in the app: where every email's task lands. */
export function taskUrl(appUrl: string, flowId: string, taskId: string): string {
  return `${appUrl.replace(/\/$/, '')}/flows/${encodeURIComponent(flowId)}#task-${encodeURIComponent(taskId)}`;
}

/** Where the app shows a member's notification settings, under `{app_url}`. */
export const SETTINGS_PATH = '/notifications';

export function settingsUrl(appUrl: string, workspaceId: string): string {
  return `${appUrl.replace(/\/$/, '')}${SETTINGS_PATH}?workspace=${encodeURIComponent(workspaceId)}`;
}

function headers(envelope: Envelope): Record<string, string> {
  return {
    'List-Unsubscribe': `<${envelope.unsubscribeUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    // RFC 3834: no auto-replies to automated mail.
    'Auto-Submitted': 'auto-generated',
  };
}

function layout(title: string, body: Html, envelope: Envelope, what: string): string {
  return mailDocument({
    title,
    body: html`<p style="${mailStyle.p}">Hello ${envelope.name},</p>
${body}`,
    footer: html`<p style="margin: 0 0 8px 0">You get this email because ${what} is switched on for you in flowplan.</p>
<p style="margin: 0">${mailLink(envelope.settingsUrl, 'Change your notification settings')} · ${mailLink(envelope.unsubscribeUrl, 'Unsubscribe from these emails')}</p>`,
  });
}

/** Each link on a line of its own, so a client's link detection takes it whole. */
function textFooter(envelope: Envelope, what: string): string {
  return `\n--\nYou get this email because ${what} is switched on for you in flowplan.\nChange your notification settings:\n${envelope.settingsUrl}\nUnsubscribe:\n${envelope.unsubscribeUrl}\n`;
}

/** Subjects are one header line: user text loses its line breaks and control characters. */
const subjectText = (text: string): string => oneLine(text).slice(0, 150);

export function batchSubject(items: readonly BatchItem[]): string {
  const assigned = items.filter((i) => i.kind === 'assigned');
  const unlocked = items.filter((i) => i.kind === 'unlocked');
  if (items.length === 1)
    return `${assigned.length ? 'Assigned to you' : 'Ready to start'}: ${subjectText(items[0]!.taskName)}`;
  const parts = [];
  if (assigned.length) parts.push(`${count(assigned.length, 'task')} assigned to you`);
  if (unlocked.length) parts.push(`${count(unlocked.length, 'task')} ready to start`);
  return parts.join(', ');
}

export function batchEmail(items: readonly BatchItem[], envelope: Envelope): StoredMessage {
  const subject = batchSubject(items);
  const sections = [
    { title: 'Assigned to you', items: items.filter((i) => i.kind === 'assigned') },
    {
      title: 'No longer blocked: ready to start',
      items: items.filter((i) => i.kind === 'unlocked'),
    },
  ].filter((s) => s.items.length > 0);
  const what = 'email about assignments and unblocked work';
  const link = (i: BatchItem) => taskUrl(envelope.appUrl, i.flowId, i.taskId);
  const text = `Hello ${envelope.name},\n\n${sections.map((s) => `${s.title}:\n${s.items.map((i) => `  - ${i.taskName} (${i.flowName})\n    ${link(i)}`).join('\n')}\n`).join('\n')}${textFooter(envelope, what)}`;
  const body = sections.map(
    (s) => html`<h2 style="${mailStyle.h2}">${s.title}</h2>
<ul style="${mailStyle.ul}">${s.items.map((i) => html`<li style="${mailStyle.li}">${mailLink(link(i), html`<strong>${i.taskName}</strong>`)} in ${i.flowName}</li>`)}</ul>`,
  );
  return {
    to: envelope.to,
    subject,
    text,
    html: layout(subject, html`${body}`, envelope, what),
    headers: headers(envelope),
  };
}

const SECTIONS: { key: 'ready' | 'inProgress' | 'blocked' | 'available'; title: string }[] = [
  { key: 'ready', title: 'Ready for you' },
  { key: 'inProgress', title: 'In progress' },
  { key: 'blocked', title: 'Yours, waiting on others' },
  { key: 'available', title: 'Unassigned and ready' },
];

function itemLine(i: DigestItem, appUrl: string): string {
  return `  - ${i.nodeTitle} (${i.questName})${i.hours !== null ? `, ${i.hours} h` : ''}${i.criticalPath ? ', on the critical path' : ''}\n    ${taskUrl(appUrl, i.questId, i.nodeId)}`;
}

export function digestSubject(digest: Digest): string {
  const c = digest.counts;
  const parts = [];
  if (c.ready) parts.push(`${c.ready} ready`);
  if (c.inProgress) parts.push(`${c.inProgress} in progress`);
  if (c.atRisk) parts.push(`${count(c.atRisk, 'flow')} at risk`);
  if (parts.length === 0 && c.completed) parts.push(`${c.completed} done yesterday`);
  if (parts.length === 0) parts.push(`${count(c.available + c.blocked, 'open task')}`);
  return `Your day in flowplan: ${parts.join(', ')}`;
}

export function digestEmail(digest: Digest, envelope: Envelope): StoredMessage {
  const subject = digestSubject(digest);
  const what = 'the morning digest';
  const more = (key: keyof Digest['counts'], shown: number) =>
    digest.counts[key] > shown ? digest.counts[key] - shown : 0;
  const textParts: string[] = [];
  const htmlParts: Html[] = [];
  for (const { key, title } of SECTIONS) {
    const items = digest[key];
    if (items.length === 0) continue;
    const extra = more(key, items.length);
    textParts.push(
      `${title} (${digest.counts[key]}):\n${items.map((i) => itemLine(i, envelope.appUrl)).join('\n')}${extra ? `\n  … and ${extra} more` : ''}\n`,
    );
    htmlParts.push(html`<h2 style="${mailStyle.h2}">${title} (${digest.counts[key]})</h2>
<ul style="${mailStyle.ul}">${items.map((i) => html`<li style="${mailStyle.li}">${mailLink(taskUrl(envelope.appUrl, i.questId, i.nodeId), html`<strong>${i.nodeTitle}</strong>`)} in ${i.questName}${i.hours !== null ? `, ${i.hours} h` : ''}${i.criticalPath ? html` <em>critical path</em>` : ''}</li>`)}</ul>${extra ? html`<p style="${mailStyle.p}">… and ${extra} more</p>` : ''}`);
  }
  if (digest.completed.length) {
    textParts.push(
      `Done in the last 24 hours (${digest.counts.completed}):\n${digest.completed.map((i) => `  - ${i.nodeTitle} (${i.questName})`).join('\n')}\n`,
    );
    htmlParts.push(html`<h2 style="${mailStyle.h2}">Done in the last 24 hours (${digest.counts.completed})</h2>
<ul style="${mailStyle.ul}">${digest.completed.map((i) => html`<li style="${mailStyle.li}">${i.nodeTitle} in ${i.questName}</li>`)}</ul>`);
  }
  if (digest.atRisk.length) {
    textParts.push(
      `Flows at risk (${digest.counts.atRisk}):\n${digest.atRisk.map((f) => `  - ${f.questName}: due ${f.dueDate.slice(0, 10)}, projected ${f.projectedFinish}`).join('\n')}\n`,
    );
    htmlParts.push(html`<h2 style="${mailStyle.h2}">Flows at risk (${digest.counts.atRisk})</h2>
<ul style="${mailStyle.ul}">${digest.atRisk.map((f) => html`<li style="${mailStyle.li}"><strong>${f.questName}</strong>: due ${f.dueDate.slice(0, 10)}, projected to finish ${f.projectedFinish}</li>`)}</ul>`);
  }
  const text = `Hello ${envelope.name},\n\n${textParts.join('\n')}${textFooter(envelope, what)}`;
  return {
    to: envelope.to,
    subject,
    text,
    html: layout(subject, html`${htmlParts}`, envelope, what),
    headers: headers(envelope),
  };
}
