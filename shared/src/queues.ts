/**
 * Queue contracts: names, job names and payload schemas shared by producers (api) and consumers
 * (workers). Fields added later must be optional so jobs already queued survive a rolling deploy.
 */
import { z } from 'zod';

export const QUEUE_NAMES = {
  ingest: 'ingest',
  audit: 'audit',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const AUDIT_JOB = 'audit-event';

export const auditEventSchema = z.object({
  /** Unique per event: the job id, so a retried enqueue or write stores the event once. */
  event_id: z.uuid(),
  event_type: z.string(),
  action: z.string(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  success: z.boolean(),
  user_id: z.number().int().nullable(),
  user_email: z.string().nullable(),
  organization_id: z.number().int().nullable(),
  ip: z.string().nullable(),
  changes: z.object({ before: z.unknown().optional(), after: z.unknown().optional() }).nullable(),
  created_at: z.iso.datetime({ offset: true }),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;
