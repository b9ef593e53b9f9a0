/** Wire contracts of the audit chain's verification and checkpoints (the rules: audit-chain.ts). */
import { z } from 'zod';
import { idSchema } from './auth-contracts.ts';

export const CHAIN_BREAK_KINDS = ['edited', 'removed', 'reordered', 'inserted'] as const;

export const chainBreakSchema = z.object({
  kind: z.enum(CHAIN_BREAK_KINDS),
  chain_seq: z.number().int(),
  event_id: z.string().nullable(),
  detail: z.string(),
});

export const signedCheckpointSchema = z.object({
  version: z.literal('bioprocess-audit-checkpoint-v1'),
  organization_id: z.number().int(),
  chain_seq: z.number().int(),
  entry_hash: z.string(),
  created_at: z.string(),
  algorithm: z.literal('Ed25519'),
  public_key: z.string(),
  key_fingerprint: z.string(),
  signature: z.string(),
});

export const auditCheckpointSchema = signedCheckpointSchema.extend({ id: z.number().int() });
export type AuditCheckpoint = z.infer<typeof auditCheckpointSchema>;

export const auditVerificationSchema = z.object({
  organization_id: z.number().int(),
  valid: z.boolean(),
  /** Entries read, in chain order. */
  entries: z.number().int(),
  last_seq: z.number().int(),
  last_hash: z.string(),
  /** Signed checkpoints whose signature and hash were checked against the chain. */
  checkpoints_checked: z.number().int(),
  latest_checkpoint: auditCheckpointSchema.nullable(),
  /** The first place the trail differs from what was written (null: intact). */
  broken: chainBreakSchema.nullable(),
});
export type AuditVerification = z.infer<typeof auditVerificationSchema>;

export const auditVerificationQuerySchema = z.object({
  /** Superusers only: another organisation's chain (0: events of no organisation). */
  organization_id: z.coerce.number().int().min(0).optional(),
});

export const auditCheckpointListQuerySchema = z.object({
  organization_id: z.coerce.number().int().min(0).optional(),
});

export const auditCheckpointParamsSchema = z.object({ id: idSchema });
