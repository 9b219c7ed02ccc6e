/** Member, Invite and Share (spec §2) and the bodies of the team and share routes. */
import { Type } from '@sinclair/typebox';
import {
  dateTime,
  Defaulted,
  pageQuery,
  lookupId,
  pathParams,
  StringEnum,
} from './common.schema.ts';
import { INVITE_STATUSES, MEMBER_ROLES, SHARE_ROLES } from './vocabulary.ts';

export const INVITE_ROLES = ['admin', 'member', 'viewer'] as const;

/**
 * Only the length is bounded here: a malformed address is 400 INVALID_EMAIL from the
 * service (spec §7), not VALIDATION_FAILED.
 */
const emailInput = Type.String({
  maxLength: 254,
  description:
    'An email address (local@domain); a malformed one is refused with 400 INVALID_EMAIL. Surrounding white space is ignored.',
});

export const MemberSchema = Type.Object({
  id: Type.String({
    description: "The person's id (`usr_…`), the same in every workspace they belong to",
  }),
  name: Type.String(),
  email: Type.String({ format: 'email' }),
  role: StringEnum(MEMBER_ROLES, {
    description: '`owner` acts as `admin` on the API and cannot be changed here',
  }),
  hoursPerDay: Type.Number({
    description:
      'Working hours the member gives a working day (0–24, quarter hours, default 8): a task assigned to them lasts max(1, ceil(hours / hoursPerDay)) working days on the levelled schedule; 0: their tasks are not scheduled there (`GET /v1/flows/{flowId}/schedule?level=true`)',
  }),
});

/** Quarter hours: a 7.5-hour day is said exactly, and every division by it is exact. */
const hoursPerDayInput = Type.Number({
  minimum: 0,
  maximum: 24,
  multipleOf: 0.25,
  description:
    "Working hours a day, 0–24 in quarter hours (7.5 yes, 7.3 no). The owner's may be changed too; 0 leaves the member's tasks off levelled schedules",
});

export const InviteSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: StringEnum(INVITE_ROLES),
  status: StringEnum(INVITE_STATUSES, {
    description: 'A pending invite occupies a seat; accepted and revoked ones do not',
  }),
  createdAt: dateTime,
});

export const ShareSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: StringEnum(SHARE_ROLES),
  flowId: Type.String(),
  createdAt: dateTime,
});

export const ListMembersQuery = Type.Object({ ...pageQuery(25) });

export const ListInvitesQuery = Type.Object({
  status: Type.Optional(StringEnum(INVITE_STATUSES, { description: 'Only invites in this state' })),
  ...pageQuery(25),
});

export const ListSharesQuery = Type.Object({ ...pageQuery(25) });

export const PatchMemberBody = Type.Object(
  {
    role: Type.Optional(StringEnum(INVITE_ROLES)),
    hoursPerDay: Type.Optional(hoursPerDayInput),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'At least one of `role` and `hoursPerDay`; a refusal of either changes neither',
  },
);

export const CreateInviteBody = Type.Object(
  {
    email: emailInput,
    role: Defaulted(StringEnum(INVITE_ROLES, { default: 'member' })),
  },
  { additionalProperties: false },
);

export const CreateShareBody = Type.Object(
  {
    email: emailInput,
    role: Defaulted(StringEnum(SHARE_ROLES, { default: 'viewer' })),
  },
  { additionalProperties: false },
);

/** Changes a guest's role, of a flow share or a brainstorm share. */
export const PatchShareBody = Type.Object(
  {
    role: StringEnum(SHARE_ROLES, { description: '`viewer` reads; `commenter` also comments' }),
  },
  { additionalProperties: false },
);

// Path ids are opaque: one that names nothing is 404, whatever its shape.
export const MemberParams = pathParams({ memberId: lookupId() });
export const InviteParams = pathParams({ inviteId: lookupId() });
export const ShareParams = pathParams({ flowId: lookupId(), shareId: lookupId() });
