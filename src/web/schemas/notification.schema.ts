/** NotificationPreferences, NotificationDelivery and NotificationDigest (spec §2) and the notification routes' inputs. */
import { DIGEST_CAP } from '../../services/notifications/digest.ts';
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { dateTime, idParam, listOf, pageQuery } from './common.schema.ts';

const memberId = { ...idParam('usr'), description: 'The member (their person id, `usr_…`)' };
const flowId = { ...idParam('flw'), description: 'A flow of the workspace: the answer (or change) is that flow\'s override' };

export const PreferencesQuery = Type.Object({ memberId, flowId: Type.Optional(flowId) }, { additionalProperties: false });

const events = Type.Object({
  assigned: Type.Optional(Type.Boolean({ description: 'A task was assigned to them (batch email). Default true' })),
  unlocked: Type.Optional(Type.Boolean({ description: 'A task of theirs stopped being blocked (batch email). Default true' })),
  digest: Type.Optional(Type.Boolean({ description: 'The morning summary (account level only). Default true' })),
}, { additionalProperties: false });

export const PreferencesSchema: Schema = {
  type: 'object',
  required: ['memberId', 'email', 'events'],
  description: 'The resolved answer (not the stored row). Defaults for a member who never changed anything: '
    + '`email` true, every event true, `timezone` `UTC`, `digestHour` 8, no flow muted.',
  properties: {
    memberId: { type: 'string' },
    flowId: { type: ['string', 'null'], description: 'Null for the account-level answer; set: the account settings with that flow\'s override applied' },
    email: { type: 'boolean', description: 'Master switch: false means no notification email whatever the event flags say' },
    muted: { type: 'boolean', description: 'Present on a flow-level answer: true silences this one flow' },
    events: { ...events, required: ['assigned', 'unlocked', 'digest'] },
    timezone: { type: 'string', description: 'IANA time zone of the digest hour, e.g. `Europe/Berlin`' },
    digestHour: { type: 'integer', minimum: 0, maximum: 23, description: 'Local hour (0–23) the digest is sent in' },
  },
};

export const PatchPreferencesBody = Type.Object({
  email: Type.Optional(Type.Boolean()),
  events: Type.Optional(events),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An IANA zone name (`Europe/Berlin`, `America/New_York`, `UTC`); anything else is 400 VALIDATION_FAILED' })),
  digestHour: Type.Optional(Type.Integer({ minimum: 0, maximum: 23 })),
  muted: Type.Optional(Type.Boolean({ description: 'Only with `flowId`: silence (true) or un-silence (false) that flow' })),
}, {
  additionalProperties: false,
  minProperties: 1,
  description: 'Account level (no `flowId` in the query): any of `email`, `events`, `timezone`, `digestHour`. '
    + 'With `flowId`: only `muted`. Omitted fields keep their value.',
});

export const DeliveriesQuery = Type.Object({ memberId, ...pageQuery(25) }, { additionalProperties: false });

export const DeliverySchema: Schema = {
  type: 'object',
  required: ['id', 'kind', 'status'],
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: ['batch', 'digest'] },
    status: {
      type: 'string', enum: ['sent', 'failed', 'skipped', 'skipped-empty', 'claimed'],
      description: '`claimed` while in flight (claimed before the SMTP send), then `sent` or `failed`; `skipped`: deliberately not sent '
        + '(switched off, unsubscribed, muted); `skipped-empty`: a digest with nothing worth mailing. A failed send is retried as a new '
        + 'delivery (`attempt` + 1, `retryOf`) with growing back-off; a claim interrupted by a crash becomes `failed` and is never resent.',
    },
    sentAt: { ...dateTime, description: 'When the send was claimed' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    subject: { type: ['string', 'null'] },
    itemCount: { type: 'integer', description: 'Events covered by one batch (items of a digest)' },
    flowIds: { type: 'array', items: { type: 'string' } },
    suppressed: { type: 'integer', description: 'Events dropped because the person unsubscribed (or muted, or switched off) after they were queued' },
    reason: { type: ['string', 'null'], description: 'Why it was skipped or failed' },
    transport: { type: ['string', 'null'], description: '`smtp`, or `outbox` (no SMTP_URL: written to the local maildir)' },
    messageId: { type: ['string', 'null'] },
    attempt: { type: 'integer', minimum: 1 },
    retryOf: { type: ['string', 'null'] },
    digestDate: { type: ['string', 'null'], format: 'date', description: 'The member\'s local day a digest is for' },
  },
};

export const DeliveriesSchema = listOf(DeliverySchema);

export const DigestQuery = Type.Object({ memberId }, { additionalProperties: false });

const workItem: Schema = {
  type: 'object',
  required: ['questId', 'questName', 'nodeId', 'nodeTitle', 'criticalPath'],
  properties: {
    questId: { type: 'string', description: 'Flow id' },
    questName: { type: 'string' },
    nodeId: { type: 'string', description: 'Task id' },
    nodeTitle: { type: 'string' },
    hours: { type: ['number', 'null'] },
    criticalPath: { type: 'boolean' },
  },
};

export const UnsubscribeParams = Type.Object({ token: Type.String({ minLength: 16, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });


export const DigestSchema: Schema = {
  type: 'object',
  required: ['memberId', 'wouldSend', 'counts'],
  description: `Built by the same builder that writes the morning email. Each section holds at most ${DIGEST_CAP} items; \`counts\` has the totals before that cap.`,
  properties: {
    memberId: { type: 'string' },
    generatedAt: dateTime,
    wouldSend: { type: 'boolean', description: 'False when every section is empty: such a digest is never sent (delivery `skipped-empty`)' },
    counts: {
      type: 'object', additionalProperties: { type: 'integer' },
      required: ['ready', 'inProgress', 'blocked', 'available', 'completed', 'atRisk'],
      properties: Object.fromEntries(['ready', 'inProgress', 'blocked', 'available', 'completed', 'atRisk'].map((k) => [k, { type: 'integer', minimum: 0 }])),
    },
    ready: { type: 'array', items: workItem, description: 'Assigned to the person and unblocked' },
    inProgress: { type: 'array', items: workItem },
    blocked: { type: 'array', items: workItem, description: 'The person\'s, waiting on someone else' },
    available: { type: 'array', items: workItem, description: 'Unassigned and ready' },
    completed: {
      type: 'array', description: 'Finished in the last 24 hours across their flows',
      items: { ...workItem, required: ['questId', 'questName', 'nodeId', 'nodeTitle', 'completedAt'], properties: { ...(workItem.properties as object), completedAt: dateTime, assigneeId: { type: ['string', 'null'] } } },
    },
    atRisk: {
      type: 'array', description: 'Flows projected to finish after their due date',
      items: {
        type: 'object', required: ['questId', 'questName', 'dueDate', 'projectedFinish'],
        properties: { questId: { type: 'string' }, questName: { type: 'string' }, dueDate: dateTime, projectedFinish: { type: 'string', format: 'date' } },
      },
    },
  },
};
