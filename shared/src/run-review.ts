/**
 * Wire contracts of electronic signatures, run review and release, and the session policy: the api
 * validates with them, the console reads with them.
 */
import { z } from 'zod';
import { formatUtcOffset, parseTimeZone, utcOffsetAt } from './csv/time-zones.ts';

export const REVIEW_STATES = ['draft', 'in_review', 'approved', 'released'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];
export const REVIEW_STATE_LABELS: Record<ReviewState, string> = {
  draft: 'Draft', in_review: 'In review', approved: 'Approved', released: 'Released',
};
/** States in which the run's content is frozen until it is reopened. */
export const LOCKED_REVIEW_STATES: readonly ReviewState[] = ['in_review', 'approved', 'released'];

export const BUILT_IN_SIGNATURE_MEANINGS = [
  { code: 'authored', label: 'Authored' },
  { code: 'reviewed', label: 'Reviewed' },
  { code: 'approved', label: 'Approved' },
  { code: 'released', label: 'Released' },
] as const;

export const signatureMeaningSchema = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]{0,59}$/, { error: 'code: lower-case letters, digits and _, starting with a letter' }),
  label: z.string().trim().min(1, { error: 'label: required' }).max(100, { error: 'label: at most 100 characters' }),
  built_in: z.boolean(),
});
export type SignatureMeaning = z.infer<typeof signatureMeaningSchema>;
export const signatureMeaningsUpdateSchema = z.object({
  meanings: z.array(signatureMeaningSchema.omit({ built_in: true })).max(20, { error: 'meanings: at most 20' }),
});

export const SIGNATURE_VALIDITY = ['valid', 'invalid', 'revoked'] as const;
/** What a signature signs: a run (review), or an alert firing (its acknowledgement, where the organisation requires it). */
export const SIGNATURE_RECORD_TYPES = ['run', 'alert_event'] as const;
export type SignatureRecordType = (typeof SIGNATURE_RECORD_TYPES)[number];
export const signatureSchema = z.object({
  id: z.number().int(),
  record_type: z.enum(SIGNATURE_RECORD_TYPES),
  record_id: z.number().int(),
  meaning: z.string(),
  meaning_label: z.string(),
  signer_id: z.number().int().nullable(),
  signer_name: z.string().describe("The signer's printed name at signing"),
  signer_email: z.string(),
  signed_at: z.string().describe('ISO 8601 instant'),
  time_zone: z.string().describe('The organisation\'s zone the signature is shown in'),
  signed_at_local: z.string().describe('Date and time in time_zone with its offset, e.g. 2026-11-29 11:02:07 CET (UTC+01:00)'),
  content_sha256: z.string().describe('SHA-256 of the canonical content of the record (run, or acknowledged alert firing) the signature was given to'),
  authentication: z.enum(['password', 'recent_sign_in']),
  validity: z.enum(SIGNATURE_VALIDITY).describe('valid: the record still hashes to content_sha256; invalid: it changed since; revoked: the run was reopened'),
  revoked_at: z.string().nullable(),
  revoke_reason: z.string().nullable(),
});
export type Signature = z.infer<typeof signatureSchema>;

const passwordField = z.string().max(1000).optional()
  .describe('Required unless the signer signed in within the organisation\'s re-authentication window');

export const signRequestSchema = z.object({
  meaning: z.string({ error: 'meaning: required' }).min(1, { error: 'meaning: required' }).max(60),
  password: passwordField,
});

export const REVIEW_ACTIONS = ['submit', 'approve', 'release', 'reopen'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];
export const reviewTransitionSchema = z.object({
  action: z.enum(REVIEW_ACTIONS, { error: 'action: one of submit, approve, release, reopen' }),
  reason: z.string().max(2000, { error: 'reason: at most 2000 characters' }).optional()
    .describe('Reopen: why, as free text (this or reason_code is required)'),
  reason_code: z.string().max(200).optional().describe("Reopen: one of the organisation's reasons for change"),
  password: passwordField,
});

export const runReviewSchema = z.object({
  run_id: z.number().int(),
  state: z.enum(REVIEW_STATES),
  state_label: z.string(),
  changed_at: z.string().nullable(),
  changed_by_name: z.string().nullable(),
  content_sha256: z.string().describe('The hash of the run as it is now'),
  signatures: z.array(signatureSchema),
  /** Whether the caller must enter the password to sign now. */
  password_required: z.boolean(),
  meanings: z.array(signatureMeaningSchema),
});
export type RunReview = z.infer<typeof runReviewSchema>;

export const REVIEW_REPORT_KINDS = ['change', 'deletion', 'upload', 'signature', 'review'] as const;
export const reviewReportEntrySchema = z.object({
  kind: z.enum(REVIEW_REPORT_KINDS),
  at: z.string(),
  who: z.string().nullable(),
  record: z.string().describe('What changed, e.g. "Run R-12" or "Sample S-01 of Fermentation #4"'),
  field: z.string().nullable(),
  old_value: z.string().nullable(),
  new_value: z.string().nullable(),
  reason: z.string().nullable(),
  detail: z.string().nullable(),
});
export type ReviewReportEntry = z.infer<typeof reviewReportEntrySchema>;

export const reviewReportSchema = z.object({
  run: z.object({ id: z.number().int(), name: z.string(), created_at: z.string() }),
  generated_at: z.string(),
  time_zone: z.string(),
  state: z.enum(REVIEW_STATES),
  content_sha256: z.string(),
  entries: z.array(reviewReportEntrySchema),
  signatures: z.array(signatureSchema),
});
export type ReviewReport = z.infer<typeof reviewReportSchema>;
export const reviewReportQuerySchema = z.object({
  format: z.enum(['json', 'csv', 'pdf'], { error: 'format: one of json, csv, pdf' }).default('json'),
});

export const sessionPolicySchema = z.object({
  inactivity_minutes: z.number().int().min(1, { error: 'inactivity_minutes: at least 1' }).max(10080, { error: 'inactivity_minutes: at most 10080 (a week)' }),
  signing_reauth_minutes: z.number().int().min(0, { error: 'signing_reauth_minutes: at least 0' }).max(60, { error: 'signing_reauth_minutes: at most 60' }),
});
export type SessionPolicy = z.infer<typeof sessionPolicySchema>;
/** An organisation that set no policy: sessions end after 30 unused minutes; signing asks for the password unless the sign-in is under 5 minutes old. */
export const DEFAULT_SESSION_POLICY: SessionPolicy = { inactivity_minutes: 30, signing_reauth_minutes: 5 };

export const userSessionSchema = z.object({
  id: z.number().int(),
  current: z.boolean(),
  user_agent: z.string().nullable(),
  ip: z.string().nullable(),
  signed_in_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string(),
});
export type UserSession = z.infer<typeof userSessionSchema>;

export const REVIEW_MESSAGES = {
  passwordRequired: 'password: enter your password to sign (your last sign-in is older than the re-authentication window)',
  passwordWrong: 'The password is not correct: the signature was not recorded',
  reasonRequired: 'reason: reopening a run needs a reason',
  sessionInactive: 'Your session ended after a period of inactivity: sign in again',
} as const;

/**
 * "2026-11-29 11:02:07 Europe/Amsterdam (UTC+01:00)": an instant as a wall-clock date and time in a
 * zone, with the zone and its offset written out, so a printed signature needs no other context.
 */
export function formatInstantInZone(iso: string, zoneName: string): string {
  const zone = parseTimeZone(zoneName) ?? parseTimeZone('UTC')!;
  const epochMs = Date.parse(iso);
  const offset = utcOffsetAt(zone, epochMs);
  const local = new Date(epochMs + offset * 60_000).toISOString();
  const offsetText = offset === 0 ? 'UTC+00:00' : `UTC${formatUtcOffset(offset)}`;
  return `${local.slice(0, 10)} ${local.slice(11, 19)} ${zone.name} (${offsetText})`;
}
