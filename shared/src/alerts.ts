/**
 * Wire contracts of alerts: rules (a scope and a condition, defined once for every series in the
 * scope), their firings (events), acknowledgements, quiet hours, and the delivery queue's payload.
 * The api validates with these, the alert worker parses stored conditions with them, the console
 * parses answers with them.
 */
import { z } from 'zod';
import { UNIT_OPERATION_TYPES } from './enums.ts';
import { listQueryShape } from './pagination.ts';
import { signatureSchema } from './run-review.ts';

export const ALERT_MESSAGES = {
  ruleNotFound: 'Alert rule not found',
  eventNotFound: 'Alert event not found',
  scopeRequired: 'A rule needs a scope: an instrument type, a unit-operation type or a run.',
  goldenBandScope: 'A golden-band rule compares the instrument type of one of its golden batch\'s parameters, on unit operations of the golden batch\'s type.',
  goldenBandAlignment: 'A golden-band rule needs a golden batch aligned at the start of its unit operations or at an event comment.',
  recipientsNotMembers: 'Email recipients must be users of the organisation.',
  webhookSecretRequired: 'A webhook needs a secret of at least 16 characters to sign its payloads.',
  acknowledgeNeedsUser: 'Alerts are acknowledged by users: an API key cannot acknowledge an alert.',
  alreadyAcknowledged: 'This alert was already acknowledged.',
  quietHoursNeedUser: 'Quiet hours belong to a user: an API key has none.',
  unknownTimeZone: 'Unknown time zone.',
  acknowledgementPasswordRequired: 'password: your organisation requires an electronic signature to acknowledge an alert: enter your password',
  acknowledgementPasswordWrong: 'The password is not correct: the alert was not acknowledged and nothing was signed.',
} as const;

export const ALERT_STATES = ['ok', 'pending', 'firing'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** Longest hold, window or silence a condition takes: a day. */
const DAY_S = 86_400;
const holdSeconds = z.number().int().min(0).max(DAY_S).default(0)
  .describe('How long the condition must hold (in the readings\' own time) before the alert fires; 0 fires at once.');

export const alertConditionSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('threshold'),
    direction: z.enum(['above', 'below']),
    value: z.number().finite(),
    hold_seconds: holdSeconds,
  }),
  z.object({
    kind: z.literal('rate_of_change'),
    direction: z.enum(['rising', 'falling', 'either']),
    per_minute: z.number().finite().positive().describe('The change per minute beyond which the condition holds.'),
    window_seconds: z.number().int().min(1).max(DAY_S).describe('The rate is the change from the first reading within this window before each reading.'),
    hold_seconds: holdSeconds,
  }),
  z.object({
    kind: z.literal('no_data'),
    period_seconds: z.number().int().min(1).max(DAY_S).describe('Fires when a series of a running unit operation has had no reading for this long.'),
  }),
  z.object({
    kind: z.literal('golden_band'),
    golden_batch_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    hold_seconds: holdSeconds,
  }),
]);
export type AlertCondition = z.infer<typeof alertConditionSchema>;
export type AlertConditionKind = AlertCondition['kind'];

const scopeText = z.string().trim().min(1).max(64);
const webhookUrl = z.url({ protocol: /^https?$/, error: 'Webhook URL must be an http or https URL.' }).max(2000);

const ruleFields = {
  name: z.string({ error: 'Name is required.' }).trim().min(1, 'Name is required.').max(100, 'Name must be at most 100 characters.'),
  enabled: z.boolean().default(true),
  instrument_type: scopeText.nullable().default(null).describe('Series of instruments of this type (a spec type or one of the organisation\'s catalogue).'),
  unit_operation_type: z.enum(UNIT_OPERATION_TYPES).nullable().default(null).describe('Only readings inside unit operations of this type.'),
  run_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable().default(null).describe('Only readings inside unit operations of this run.'),
  condition: alertConditionSchema,
  email_user_ids: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).max(100).default([]).describe('Users of the organisation who receive an email per notification.'),
  webhook_url: webhookUrl.nullable().default(null),
  webhook_secret: z.string().min(16, ALERT_MESSAGES.webhookSecretRequired).max(200).nullable().default(null)
    .describe('Signs each webhook payload (HMAC-SHA256, header X-Alert-Signature: sha256=<hex>); write-only.'),
  group_window_seconds: z.number().int().min(0).max(DAY_S).default(900)
    .describe('Firings of the rule in one run within this window after a notification join it instead of notifying again.'),
};

function ruleRules<T extends z.ZodType<{ instrument_type: string | null; unit_operation_type: string | null; run_id: number | null; webhook_url: string | null; webhook_secret: string | null }>>(schema: T) {
  return schema
    .refine((rule) => rule.instrument_type !== null || rule.unit_operation_type !== null || rule.run_id !== null, { message: ALERT_MESSAGES.scopeRequired })
    .refine((rule) => rule.webhook_url === null || rule.webhook_secret !== null, { message: ALERT_MESSAGES.webhookSecretRequired });
}

export const alertRuleCreateSchema = ruleRules(z.object(ruleFields));
export type AlertRuleCreate = z.infer<typeof alertRuleCreateSchema>;
/** An update replaces the rule; a webhook secret left out (null) with the same URL keeps the stored one. */
export const alertRuleUpdateSchema = z.object(ruleFields);
export type AlertRuleUpdate = z.infer<typeof alertRuleUpdateSchema>;

export const alertRuleSchema = z.object({
  id: z.number().int(),
  organization_id: z.number().int(),
  name: z.string(),
  enabled: z.boolean(),
  instrument_type: z.string().nullable(),
  unit_operation_type: z.string().nullable(),
  run_id: z.number().int().nullable(),
  condition: alertConditionSchema,
  email_user_ids: z.array(z.number().int()),
  webhook_url: z.string().nullable(),
  has_webhook_secret: z.boolean(),
  group_window_seconds: z.number().int(),
  created_by: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AlertRule = z.infer<typeof alertRuleSchema>;

export const alertEventSchema = z.object({
  id: z.number().int(),
  organization_id: z.number().int(),
  rule_id: z.number().int(),
  rule_name: z.string(),
  condition_kind: z.enum(['threshold', 'rate_of_change', 'no_data', 'golden_band']),
  instrument_id: z.number().int(),
  instrument_name: z.string(),
  unit_operation_id: z.number().int().nullable(),
  run_id: z.number().int().nullable(),
  run_name: z.string().nullable(),
  state: z.enum(['firing', 'resolved']),
  started_at: z.string().describe('When the condition began to hold (the reading\'s time).'),
  fired_at: z.string().describe('When the alert fired: the condition held for the rule\'s hold time.'),
  resolved_at: z.string().nullable().describe('When the condition cleared (the first reading that did not meet it).'),
  value: z.number().nullable(),
  message: z.string(),
  acknowledged_at: z.string().nullable(),
  acknowledged_by: z.number().int().nullable(),
  acknowledged_by_name: z.string().nullable(),
  acknowledgement: z.string().nullable(),
  acknowledgement_signature: signatureSchema.nullable()
    .describe('The electronic signature of the acknowledgement (meaning Reviewed), where the organisation required one; its validity is computed now.'),
});
export type AlertEvent = z.infer<typeof alertEventSchema>;

export const alertEventListQuerySchema = z.object({
  ...listQueryShape,
  run_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  unit_operation_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  rule_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  state: z.enum(['firing', 'resolved']).optional(),
  unacknowledged: z.enum(['true', 'false']).transform((text) => text === 'true').optional(),
});

export const alertAcknowledgeSchema = z.object({
  comment: z.string({ error: 'A comment is required to acknowledge an alert.' }).trim()
    .min(1, 'A comment is required to acknowledge an alert.').max(2000, 'The comment must be at most 2000 characters.'),
  password: z.string().max(1000, 'password: at most 1000 characters').optional()
    .describe('The acknowledger\'s password: required when the organisation requires acknowledgements to be signed, ignored otherwise.'),
});

/** The organisation's rule for acknowledgements: every member reads it (the console asks for the password when it is on); admins change it. */
export const alertAcknowledgementSettingsSchema = z.object({
  requires_signature: z.boolean({ error: 'requires_signature: true or false' })
    .describe('Acknowledging an alert requires an electronic signature: the acknowledger\'s password, recorded as a signature bound to the firing.'),
});
export type AlertAcknowledgementSettings = z.infer<typeof alertAcknowledgementSettingsSchema>;

export const alertSummarySchema = z.object({
  firing: z.number().int().describe('Open firings of the organisation.'),
  unacknowledged: z.number().int().describe('Firings, open or resolved, nobody acknowledged yet: the count in the console\'s shell.'),
});

const minuteOfDay = z.number().int().min(0).max(1439);
export const quietHoursSchema = z.object({
  start_minute: minuteOfDay.describe('Minutes after local midnight when quiet hours begin.'),
  end_minute: minuteOfDay.describe('Minutes after local midnight when they end (before start_minute: over midnight).'),
  time_zone: z.string().min(1).max(64).describe('IANA time zone of the two times.'),
});
export type QuietHours = z.infer<typeof quietHoursSchema>;
export const quietHoursAnswerSchema = quietHoursSchema.nullable();

/** The queue of alert deliveries (an email or a webhook call per alert_deliveries row). */
export const ALERT_DELIVERY_QUEUE = 'alert-delivery';
export const ALERT_DELIVERY_JOB = 'deliver';
export const alertDeliveryPayloadSchema = z.object({ delivery_id: z.number().int().positive() });

/** The webhook's payload: what fired, where, and a link to it. */
export const alertWebhookPayloadSchema = z.object({
  delivery_id: z.number().int(),
  notification_id: z.number().int(),
  rule: z.object({ id: z.number().int(), name: z.string() }),
  events: z.number().int().describe('Firings grouped into this notification so far.'),
  event: alertEventSchema,
  link: z.string(),
});
export type AlertWebhookPayload = z.infer<typeof alertWebhookPayloadSchema>;
export const ALERT_SIGNATURE_HEADER = 'x-alert-signature';
