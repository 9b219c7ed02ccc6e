/**
 * The answers' types as the tests read them: each the static type of the schema the server
 * documents for that answer (src/contract), named once here for `s.api<T>()`. The body is
 * not checked against it (the OpenAPI sweeps do that); the type only says what a test reads.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type {
  BrainstormSchema,
  BrainstormShareSchema,
  BrainstormSummarySchema,
  IdeaCommentSchema,
  IdeaSchema,
} from '../../src/contract/brainstorm.schema.ts';
import type { BaselineSchema, VarianceSchema } from '../../src/contract/baseline.schema.ts';
import type { ErrorSchema, listOf } from '../../src/contract/common.schema.ts';
import type { ContextSchema, TokenSchema } from '../../src/contract/context.schema.ts';
import type { EventPageSchema, EventSchema } from '../../src/contract/event.schema.ts';
import type {
  DeliverableSchema,
  FlowSchema,
  FlowSummarySchema,
  TaskSchema,
} from '../../src/contract/flow.schema.ts';
import type {
  DeliverySchema as NotificationDeliverySchema,
  DigestSchema,
  PreferencesSchema,
} from '../../src/contract/notification.schema.ts';
import type { AuthorizationServerMetadataSchema } from '../../src/contract/oauth.schema.ts';
import type { PublicBrainstormSchema, PublicFlowSchema } from '../../src/contract/public.schema.ts';
import type { BatchSchema, WhatIfSchema } from '../../src/contract/plan.schema.ts';
import type { ReportSchema, ScheduleSchema } from '../../src/contract/schedule.schema.ts';
import type { SearchResultSchema } from '../../src/contract/search.schema.ts';
import type {
  AttachmentSchema,
  CommentSchema,
  CompleteSchema,
  TaskPageSchema,
} from '../../src/contract/task.schema.ts';
import type { InviteSchema, MemberSchema, ShareSchema } from '../../src/contract/team.schema.ts';
import type { TemplateDetailSchema, TemplateSchema } from '../../src/contract/template.schema.ts';
import type {
  DeliverySchema as WebhookDeliverySchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from '../../src/contract/webhook.schema.ts';
import type { OverviewSchema, WorkItemSchema } from '../../src/contract/work.schema.ts';

/**
 * A document the tests walk by structure (the OpenAPI and AsyncAPI documents, a JSON Schema in
 * them): any keyword may hold anything, and nothing in the contract types it; the one `any` of
 * the answers' types.
 */
export type JsonDocument = Record<string, any>;

/** A page of a list (`listOf(S)`): `{ total, items }`. */
type ListOf<S extends TSchema> = Static<ReturnType<typeof listOf<S>>>;

export type ErrorBody = Static<typeof ErrorSchema>;
/** A refusal whose `details` a test reads: they differ by code and the contract leaves them open. */
export interface Refusal {
  error: Omit<ErrorBody['error'], 'details'> & { details: JsonDocument };
}
export type Flow = Static<typeof FlowSchema>;
export type FlowSummary = Static<typeof FlowSummarySchema>;
export type Task = Static<typeof TaskSchema>;
export type Deliverable = Static<typeof DeliverableSchema>;
export type Completed = Static<typeof CompleteSchema>;
export type TaskPage = Static<typeof TaskPageSchema>;
export type Comment = Static<typeof CommentSchema>;
export type Attachment = Static<typeof AttachmentSchema>;
export type Schedule = Static<typeof ScheduleSchema>;
export type Report = Static<typeof ReportSchema>;
export type BatchResult = Static<typeof BatchSchema>;
export type WhatIf = Static<typeof WhatIfSchema>;
export type Baseline = Static<typeof BaselineSchema>;
export type Variance = Static<typeof VarianceSchema>;
export type { Command } from '../../src/contract/plan.schema.ts';
export type WorkItem = Static<typeof WorkItemSchema>;
export type Overview = Static<typeof OverviewSchema>;
export type Brainstorm = Static<typeof BrainstormSchema>;
export type BrainstormSummary = Static<typeof BrainstormSummarySchema>;
export type Idea = Static<typeof IdeaSchema>;
export type IdeaComment = Static<typeof IdeaCommentSchema>;
export type BrainstormShare = Static<typeof BrainstormShareSchema>;
export type Member = Static<typeof MemberSchema>;
export type Invite = Static<typeof InviteSchema>;
export type Share = Static<typeof ShareSchema>;
export type Template = Static<typeof TemplateSchema>;
export type TemplateDetail = Static<typeof TemplateDetailSchema>;
export type SearchResult = Static<typeof SearchResultSchema>;
export type Preferences = Static<typeof PreferencesSchema>;
export type NotificationDelivery = Static<typeof NotificationDeliverySchema>;
export type Digest = Static<typeof DigestSchema>;
export type Webhook = Static<typeof WebhookSchema>;
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
export type Event = Static<typeof EventSchema>;
export type EventPage = Static<typeof EventPageSchema>;
/** What a webhook delivery posts: an Event without its id and cursor (event.schema.ts). */
export type WebhookPayload = Omit<Event, 'id' | 'cursor'>;
export type Context = Static<typeof ContextSchema>;
export type Token = Static<typeof TokenSchema>;
export type ServerMetadata = Static<typeof AuthorizationServerMetadataSchema>;
export type PublicFlow = Static<typeof PublicFlowSchema>;
export type PublicBrainstorm = Static<typeof PublicBrainstormSchema>;

export type FlowList = ListOf<typeof FlowSummarySchema>;
export type TaskList = ListOf<typeof TaskSchema>;
export type CommentList = ListOf<typeof CommentSchema>;
export type BaselineList = ListOf<typeof BaselineSchema>;
export type AttachmentList = ListOf<typeof AttachmentSchema>;
export type WorkList = ListOf<typeof WorkItemSchema>;
export type BrainstormList = ListOf<typeof BrainstormSummarySchema>;
export type IdeaCommentList = ListOf<typeof IdeaCommentSchema>;
export type BrainstormShareList = ListOf<typeof BrainstormShareSchema>;
export type MemberList = ListOf<typeof MemberSchema>;
export type InviteList = ListOf<typeof InviteSchema>;
export type ShareList = ListOf<typeof ShareSchema>;
export type TemplateList = ListOf<typeof TemplateSchema>;
export type SearchResults = ListOf<typeof SearchResultSchema>;
export type NotificationDeliveryList = ListOf<typeof NotificationDeliverySchema>;
export type WebhookList = ListOf<typeof WebhookSchema>;
export type WebhookDeliveryList = ListOf<typeof WebhookDeliverySchema>;
