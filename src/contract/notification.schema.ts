/** NotificationPreferences, NotificationDelivery and NotificationDigest (spec §2) and the notification routes' inputs. */
import { Type } from '@sinclair/typebox';
import {
  dateTime,
  dueDateTime,
  idParam,
  listOf,
  Nullable,
  pageQuery,
  StringEnum,
} from './common.schema.ts';

/** The most items a digest section lists; its counts hold the totals before the cap. */
export const DIGEST_CAP = 10;

const memberId = { ...idParam('usr'), description: 'The member (their person id, `usr_…`)' };
const flowId = {
  ...idParam('flw'),
  description: "A flow of the workspace: the answer (or change) is that flow's override",
};

export const PreferencesQuery = Type.Object(
  { memberId, flowId: Type.Optional(flowId) },
  { additionalProperties: false },
);

const events = Type.Object(
  {
    assigned: Type.Optional(
      Type.Boolean({ description: 'A task was assigned to them (batch email). Default true' }),
    ),
    unlocked: Type.Optional(
      Type.Boolean({
        description: 'A task of theirs stopped being blocked (batch email). Default true',
      }),
    ),
    digest: Type.Optional(
      Type.Boolean({ description: 'The morning summary (account level only). Default true' }),
    ),
  },
  { additionalProperties: false },
);

export const PreferencesSchema = Type.Object(
  {
    memberId: Type.String(),
    flowId: Nullable(
      Type.String({
        description:
          "Null for the account-level answer; set: the account settings with that flow's override applied",
      }),
    ),
    email: Type.Boolean({
      description: 'Master switch: false means no notification email whatever the event flags say',
    }),
    muted: Type.Optional(
      Type.Boolean({ description: 'Present on a flow-level answer: true silences this one flow' }),
    ),
    events: Type.Required(events),
    timezone: Type.String({
      description: 'IANA time zone of the digest hour, e.g. `Europe/Berlin`',
    }),
    digestHour: Type.Integer({
      minimum: 0,
      maximum: 23,
      description: 'Local hour (0–23) the digest is sent in',
    }),
  },
  {
    description:
      'The resolved answer (not the stored row). Defaults for a member who never changed anything: ' +
      '`email` true, every event true, `timezone` `UTC`, `digestHour` 8, no flow muted.',
  },
);

export const PatchPreferencesBody = Type.Object(
  {
    email: Type.Optional(Type.Boolean()),
    events: Type.Optional(events),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'An IANA zone name (`Europe/Berlin`, `America/New_York`, `UTC`); anything else is 400 VALIDATION_FAILED',
      }),
    ),
    digestHour: Type.Optional(Type.Integer({ minimum: 0, maximum: 23 })),
    muted: Type.Optional(
      Type.Boolean({
        description: 'Only with `flowId`: silence (true) or un-silence (false) that flow',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Account level (no `flowId` in the query): any of `email`, `events`, `timezone`, `digestHour`. ' +
      'With `flowId`: only `muted`. Omitted fields keep their value.',
  },
);

export const DeliveriesQuery = Type.Object(
  { memberId, ...pageQuery(25) },
  { additionalProperties: false },
);

export const DeliverySchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(['batch', 'digest']),
  status: StringEnum(['sent', 'failed', 'skipped', 'skipped-empty', 'claimed'], {
    description:
      '`claimed` while in flight (claimed before the SMTP send), then `sent` or `failed`; `skipped`: deliberately not sent ' +
      '(switched off, unsubscribed, muted); `skipped-empty`: a digest with nothing worth mailing. A failed send is retried as a new ' +
      'delivery (`attempt` + 1, `retryOf`) with growing back-off; a claim interrupted by a crash becomes `failed` and is never resent.',
  }),
  sentAt: Type.String({ format: 'date-time', description: 'When the send was claimed' }),
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  subject: Nullable(Type.String()),
  itemCount: Type.Integer({ description: 'Events covered by one batch (items of a digest)' }),
  flowIds: Type.Array(Type.String()),
  suppressed: Type.Integer({
    description:
      'Events dropped because the person unsubscribed (or muted, or switched off) after they were queued',
  }),
  reason: Nullable(Type.String({ description: 'Why it was skipped or failed' })),
  transport: Nullable(
    Type.String({
      description: '`smtp`, or `outbox` (no SMTP_URL: written to the local maildir)',
    }),
  ),
  messageId: Nullable(Type.String()),
  attempt: Type.Integer({ minimum: 1 }),
  retryOf: Nullable(Type.String()),
  digestDate: Nullable(
    Type.String({ format: 'date', description: "The member's local day a digest is for" }),
  ),
});

export const DeliveriesSchema = listOf(DeliverySchema);

export const DigestQuery = Type.Object({ memberId }, { additionalProperties: false });

const workItemProperties = {
  questId: Type.String({ description: 'Flow id' }),
  questName: Type.String(),
  nodeId: Type.String({ description: 'Task id' }),
  nodeTitle: Type.String(),
  hours: Nullable(Type.Number()),
  criticalPath: Type.Boolean(),
};
const workItem = Type.Object(workItemProperties);
const completedItem = Type.Object({
  ...workItemProperties,
  completedAt: dateTime,
  assigneeId: Nullable(Type.String()),
});
const count = Type.Integer({ minimum: 0 });

export const UnsubscribeParams = Type.Object({
  token: Type.String({ minLength: 16, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});

export const DigestSchema = Type.Object(
  {
    memberId: Type.String(),
    generatedAt: dateTime,
    wouldSend: Type.Boolean({
      description:
        'False when every section is empty: such a digest is never sent (delivery `skipped-empty`)',
    }),
    counts: Type.Object(
      {
        ready: count,
        inProgress: count,
        blocked: count,
        available: count,
        completed: count,
        atRisk: count,
      },
      { additionalProperties: Type.Integer() },
    ),
    ready: Type.Array(workItem, { description: 'Assigned to the person and unblocked' }),
    inProgress: Type.Array(workItem),
    blocked: Type.Array(workItem, { description: "The person's, waiting on someone else" }),
    available: Type.Array(workItem, { description: 'Unassigned and ready' }),
    completed: Type.Array(completedItem, {
      description: 'Finished in the last 24 hours across their flows',
    }),
    atRisk: Type.Array(
      Type.Object({
        questId: Type.String(),
        questName: Type.String(),
        dueDate: dueDateTime,
        projectedFinish: Type.String({ format: 'date' }),
      }),
      { description: 'Flows projected to finish after their due date' },
    ),
  },
  {
    description: `Built by the same builder that writes the morning email. Each section holds at most ${DIGEST_CAP} items; \`counts\` has the totals before that cap.`,
  },
);
