/**
 * Wire contracts (snake_case) of the identity calls: sign-in, sessions, password reset, users,
 * organisations, API keys and the audit log. The api validates with them and generates its OpenAPI
 * document from them; the console parses responses with the same schemas.
 */
import { z } from 'zod';
import { ROLES } from './enums.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_REQUIREMENTS_MESSAGE } from './password.ts';
import { cappedExponentialDelay } from './capped-backoff.ts';

export const EMAIL_MESSAGE = 'Please provide a valid email address';
export const NAME_REQUIRED_MESSAGE = 'Name is required';
export const ORGANIZATION_NAME_REQUIRED_MESSAGE = 'Organization name is required';
export const ROLE_MESSAGE = `Role must be one of: ${ROLES.join(', ')}`;

/** Emails are compared case-insensitively (the unique index is on lower(email)); stored trimmed. */
export const emailSchema = z.string().trim().max(254, EMAIL_MESSAGE).pipe(z.email(EMAIL_MESSAGE));
export const personNameSchema = z.string().trim().min(1, NAME_REQUIRED_MESSAGE).max(200, 'Name must be at most 200 characters');
export const roleSchema = z.enum(ROLES, { message: ROLE_MESSAGE });
/**
 * The policy itself (shared/password.ts) is checked by the server after parsing so that the answer is
 * exactly PASSWORD_REQUIREMENTS_MESSAGE; the schema only bounds the size.
 */
export const newPasswordSchema = z
  .string({ message: 'Password is required' })
  .max(PASSWORD_MAX_LENGTH, PASSWORD_REQUIREMENTS_MESSAGE)
  .describe('8-128 characters with an uppercase letter, a lowercase letter, a digit and one of @$!%*?&');

/** Ids arrive as path strings (or strings in bodies, as the console sends them); coerced once here. */
export const idSchema = z.coerce.number({ message: 'Id must be a positive integer' }).int('Id must be a positive integer').positive('Id must be a positive integer');
export const idParamsSchema = z.object({ id: idSchema });

// ---- auth ------------------------------------------------------------------------------------

export const signupRequestSchema = z.object({
  email: emailSchema,
  password: newPasswordSchema,
  name: personNameSchema,
});
export type SignupRequest = z.infer<typeof signupRequestSchema>;

/**
 * The sign-in email is checked for shape and length before anything records it: a failed sign-in
 * writes the email to the audit trail, so text that is no email address (a formula, a kilobyte of
 * junk) is refused with 400 and never stored.
 */
export const loginRequestSchema = z.object({
  // Shape only (one @, no spaces or quotes, bounded parts), Unicode allowed: which account it names is
  // for PostgreSQL's lower() to decide, and the throttle must see the İ spelling of an address too.
  email: z.string({ message: 'Email is required' }).trim().min(1, 'Email is required').max(254, EMAIL_MESSAGE)
    .pipe(z.email({ pattern: z.regexes.unicodeEmail, message: EMAIL_MESSAGE })),
  password: z.string({ message: 'Password is required' }).min(1, 'Password is required').max(1024, 'Password is too long'),
});
export type LoginRequest = z.infer<typeof loginRequestSchema>;

/** A wait in words, for the messages of refusals that carry a Retry-After. */
export function waitText(seconds: number): string {
  return seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} second${seconds === 1 ? '' : 's'}`;
}

/**
 * The sign-in refusal once an account met failures from many addresses: a delay, never a lock; the
 * owner's way in without waiting is the emailed reset link.
 */
export const LOGIN_DELAYED_MESSAGE_START = 'Too many failed sign-ins for this account.';
export function loginDelayedMessage(after: string): string {
  return `${LOGIN_DELAYED_MESSAGE_START} Please try again in ${after}, or reset your password with "Forgot Password?" to sign in now.`;
}

export const forgotPasswordRequestSchema = z.object({ email: emailSchema });
export const resetPasswordRequestSchema = z.object({
  token: z.string({ message: 'Invalid reset token' }).min(1, 'Invalid reset token').max(200, 'Invalid reset token'),
  password: newPasswordSchema,
});

export const authUserSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  roles: z.array(z.string()),
  organization_id: z.number().int(),
  superuser: z.boolean(),
});
export type AuthUser = z.infer<typeof authUserSchema>;

export const authResponseSchema = z.object({ token: z.string(), user: authUserSchema });
export type AuthResponse = z.infer<typeof authResponseSchema>;

export const profileSchema = authUserSchema.extend({
  organization_name: z.string().nullable(),
  created_at: z.string(),
});
export type Profile = z.infer<typeof profileSchema>;

export const updateProfileRequestSchema = z.object({ name: personNameSchema });

export const messageResponseSchema = z.object({ message: z.string() });

export const switchOrganizationRequestSchema = z.object({
  /** The console sends it as a string; a number is accepted too. */
  organizationId: idSchema,
});

// ---- users -----------------------------------------------------------------------------------

export const userSchema = authUserSchema.extend({
  organization_name: z.string().nullable(),
  /** False for an invited user who has not set a password yet. */
  has_password: z.boolean(),
  created_at: z.string(),
});
export type User = z.infer<typeof userSchema>;

export const listUsersQuerySchema = z.object({
  /** Superusers only: one organisation instead of all. Ignored for admins (always their own). */
  organization_id: idSchema.optional(),
});

export const INVITATION_MESSAGES = {
  invalidToken: 'This invitation link is invalid, has expired or was revoked. Ask the organisation\'s admin to send a new invitation.',
  accountExists: 'This email address already has an account, so the invitation cannot create another one. '
    + 'Sign in with your existing account (use "Forgot Password?" on the sign-in page if you do not know its password). '
    + 'An account belongs to one organisation: to join this one, ask its admin to invite another address of yours.',
  notFound: 'Invitation not found',
  perOrganization: (limit: number) => `Invitation limit reached: an organisation sends at most ${limit} invitation mails per 24 hours. Please try again later.`,
  perAddress: (limit: number) => `Invitation limit reached: at most ${limit} invitation mails to one address per 24 hours. Please try again later.`,
} as const;

/**
 * An invitation names only an address and a role: the invitee chooses their own name when accepting,
 * and the mail carries nothing the inviter wrote besides the organisation's name.
 */
export const inviteUserRequestSchema = z.object({
  email: emailSchema,
  roleName: roleSchema,
  /** Superusers may invite into another organisation; admins always invite into their own. */
  organization_id: idSchema.optional(),
});

/**
 * An open invitation, as its organisation's admins see it. The same for any address: whether the
 * address has an account somewhere is never part of it.
 */
export const invitationSchema = z.object({
  id: z.number().int(),
  organization_id: z.number().int(),
  email: z.string(),
  role: z.string(),
  /** `expired` once the link's lifetime passed; a resend renews it. */
  status: z.enum(['pending', 'expired']),
  created_at: z.string(),
  last_sent_at: z.string(),
  expires_at: z.string(),
});
export type Invitation = z.infer<typeof invitationSchema>;

export const listInvitationsQuerySchema = listUsersQuerySchema;

const invitationTokenSchema = z.string({ message: INVITATION_MESSAGES.invalidToken }).min(1, INVITATION_MESSAGES.invalidToken).max(200, INVITATION_MESSAGES.invalidToken);

export const invitationTokenRequestSchema = z.object({ token: invitationTokenSchema });

/** What the invitee sees on the acceptance page: told to them (the link's holder), never to the inviter. */
export const invitationPreviewSchema = z.object({
  organization_name: z.string(),
  email: z.string(),
  role: z.string(),
  expires_at: z.string(),
  /** The address already has an account (in any organisation): accepting cannot create one. */
  account_exists: z.boolean(),
});
export type InvitationPreview = z.infer<typeof invitationPreviewSchema>;

export const acceptInvitationRequestSchema = z.object({
  token: invitationTokenSchema,
  name: personNameSchema,
  password: newPasswordSchema,
});

export const changeRoleRequestSchema = z.object({ roleName: roleSchema });
export const setSuperuserRequestSchema = z.object({ superuser: z.boolean({ message: 'superuser must be true or false' }) });

// ---- organisations ---------------------------------------------------------------------------

export const organizationSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  user_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Organization = z.infer<typeof organizationSchema>;

const organizationDescriptionSchema = z
  .string()
  .trim()
  .max(2000, 'Description must be at most 2000 characters')
  .nullish()
  .transform((value) => (value ? value : null));

export const organizationRequestSchema = z.object({
  name: z.string({ message: ORGANIZATION_NAME_REQUIRED_MESSAGE }).trim().min(1, ORGANIZATION_NAME_REQUIRED_MESSAGE).max(200, 'Organization name must be at most 200 characters'),
  description: organizationDescriptionSchema,
});

// ---- API keys --------------------------------------------------------------------------------

export const apiKeySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  role: z.string(),
  /** The first characters of the key, enough to recognise it; the key itself is never shown again. */
  key_prefix: z.string(),
  created_by: z.number().int().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  /** After this instant the key is refused; null: until revoked. */
  expires_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

/** API keys are for instrument feeds: they read and write data, never administer (no admin role). */
export const API_KEY_ROLES = ['viewer', 'editor'] as const;
export const API_KEY_ROLE_MESSAGE = 'API keys can have the viewer or editor role; administration needs a signed-in admin';
export const API_KEY_EXPIRY_MESSAGE = 'expires_at must be a date and time in the future';

export const createApiKeyRequestSchema = z.object({
  name: z.string({ message: 'Key name is required' }).trim().min(1, 'Key name is required').max(100, 'Key name must be at most 100 characters'),
  role: z.enum(API_KEY_ROLES, { message: API_KEY_ROLE_MESSAGE }).default('editor'),
  expires_at: z.iso.datetime({ offset: true, message: API_KEY_EXPIRY_MESSAGE })
    .refine((value) => Date.parse(value) > Date.now(), { message: API_KEY_EXPIRY_MESSAGE })
    .nullish(),
});
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() });

// ---- audit log -------------------------------------------------------------------------------

export const AUDIT_LOG_DEFAULT_LIMIT = 50;
export const AUDIT_LOG_MAX_LIMIT = 1000;

export const auditLogSchema = z.object({
  id: z.number().int(),
  event_id: z.string(),
  event_type: z.string(),
  user_id: z.number().int().nullable(),
  user_email: z.string().nullable(),
  action: z.string(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  success: z.boolean(),
  organization_id: z.number().int().nullable(),
  ip: z.string().nullable(),
  changes: z.unknown().nullable(),
  created_at: z.string(),
  /** The resource's name: as the event recorded it, else as the resource is named now (the list only). */
  resource_name: z.string().nullable().optional(),
  /** Why the change was made (free text and the pick-list entry), when the person gave one. */
  change_reason: z.string().nullable().optional(),
  change_reason_code: z.string().nullable().optional(),
  /** The entry's position in its organisation's hash chain (null: not linked). */
  chain_seq: z.number().int().nullable().optional(),
});
export type AuditLog = z.infer<typeof auditLogSchema>;

const isoDateSchema = (field: string) =>
  z.string().refine((value) => !Number.isNaN(Date.parse(value)), { message: `${field} must be a valid date` });

export const auditLogQuerySchema = z.object({
  limit: z.coerce.number().int('limit must be an integer').min(1, 'limit must be at least 1').max(AUDIT_LOG_MAX_LIMIT, `limit must be at most ${AUDIT_LOG_MAX_LIMIT}`).default(AUDIT_LOG_DEFAULT_LIMIT),
  start_date: isoDateSchema('start_date').optional(),
  end_date: isoDateSchema('end_date').optional(),
  /** Superusers only: restrict to one organisation. */
  organization_id: idSchema.optional(),
});

export const auditExportQuerySchema = z.object({
  format: z.enum(['csv'], { message: 'format must be csv' }).default('csv'),
  start_date: isoDateSchema('start_date').optional(),
  end_date: isoDateSchema('end_date').optional(),
  organization_id: idSchema.optional(),
});

/** Column order of the CSV export (header row). */
export const AUDIT_EXPORT_COLUMNS = [
  'id', 'created_at', 'event_type', 'action', 'success', 'user_email', 'user_id', 'organization_id',
  'resource_type', 'resource_id', 'ip', 'changes', 'change_reason', 'change_reason_code',
  // What the offline verifier needs to recompute the hash chain (docs/compliance.md).
  'event_id', 'change_seq', 'chain_seq', 'prev_hash', 'entry_hash',
] as const;

export const devOutboxMessageSchema = z.object({
  id: z.number().int(),
  to: z.string(),
  subject: z.string(),
  body: z.string(),
  link: z.string().nullable(),
  created_at: z.string(),
});

/**
 * Delivery of audit events (producer: the api's outbox relay, api/src/audit/relay.ts; consumer: the
 * audit-worker). Retries back off exponentially but never wait more than a minute, so events queued
 * during a long PostgreSQL outage are written within a minute of its end; the attempt budget covers
 * outages of many weeks.
 */
export const AUDIT_RETRY = {
  backoffType: 'audit-capped-exponential',
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  attempts: 100_000,
} as const;

export function auditRetryDelayMs(attemptsMade: number): number {
  return cappedExponentialDelay(attemptsMade, AUDIT_RETRY.baseDelayMs, AUDIT_RETRY.maxDelayMs);
}
