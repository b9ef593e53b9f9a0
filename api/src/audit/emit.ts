/**
 * Emits audit events onto the audit queue. The request never waits for the audit write: the event is
 * handed to BullMQ (which buffers while Redis reconnects) and the audit-worker stores it. The job id
 * is the event id, so a retried enqueue cannot store an event twice.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { AUDIT_JOB, type AuditEvent } from '@bioprocess/shared/queues';
import { AUDIT_RETRY } from '@bioprocess/shared/auth-contracts';
import type { AppDeps } from '../platform/deps.ts';

export interface AuditInput {
  event_type: string;
  action: string;
  resource_type?: string | null;
  resource_id?: string | number | null;
  success?: boolean;
  changes?: { before?: unknown; after?: unknown } | null;
  /** Overrides for events without a principal yet (login, signup, password reset). */
  user_id?: number | null;
  user_email?: string | null;
  organization_id?: number | null;
}

export function buildAuditEvent(request: FastifyRequest | null, input: AuditInput): AuditEvent {
  const principal = request?.principal ?? null;
  return {
    event_id: randomUUID(),
    event_type: input.event_type,
    action: input.action,
    resource_type: input.resource_type ?? null,
    resource_id: input.resource_id === undefined || input.resource_id === null ? null : String(input.resource_id),
    success: input.success ?? true,
    user_id: input.user_id !== undefined ? input.user_id : principal?.userId ?? null,
    user_email: input.user_email !== undefined ? input.user_email : principal?.email ?? principal?.name ?? null,
    organization_id: input.organization_id !== undefined ? input.organization_id : principal?.organizationId ?? null,
    // A trusted proxy passes on what the client wrote in X-Forwarded-For: only an address is kept.
    ip: request && isIP(request.ip) !== 0 ? request.ip : null,
    changes: input.changes ?? null,
    created_at: new Date().toISOString(),
  };
}

export function emitAudit(deps: Pick<AppDeps, 'queues' | 'logger'>, request: FastifyRequest | null, input: AuditInput): void {
  const event = buildAuditEvent(request, input);
  deps.queues.audit
    .add(AUDIT_JOB, event, {
      jobId: event.event_id,
      attempts: AUDIT_RETRY.attempts,
      // Computed by the audit-worker (capped exponential), see AUDIT_RETRY.
      backoff: { type: AUDIT_RETRY.backoffType },
      removeOnComplete: true,
      removeOnFail: 10_000,
    })
    .catch((error: unknown) => deps.logger.error({ err: error, event }, 'audit event could not be queued'));
}
