/**
 * Records audit events in the transactional outbox. Call recordAudit with the transaction's client,
 * inside the transaction that makes the change: the event commits with the change or not at all.
 * Events without a change of their own (a failed sign-in, an export) pass the pool and are committed
 * alone. The relay (relay.ts) hands committed rows to the audit queue; the audit-worker stores them.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { AuditOutboxEvent } from '@bioprocess/shared/queues';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { writeAuditOutbox } from '@bioprocess/shared/server/audit-outbox';

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
  /** Overrides the reason the request gave (X-Change-Reason), for routes that take it in their body. */
  change_reason?: { text: string | null; code: string | null } | null;
}

/** The event for an input: who (the request's principal unless overridden), from where, what. */
export function describeAuditEvent(request: FastifyRequest | null, input: AuditInput): AuditOutboxEvent {
  const principal = request?.principal ?? null;
  const reason = input.change_reason !== undefined ? input.change_reason : request?.changeReason ?? null;
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
    change_reason: reason?.text ?? null,
    change_reason_code: reason?.code ?? null,
  };
}

/** Writes the event into audit_outbox through `db`: a transaction's client, or the pool for an event alone. */
export async function recordAudit(db: Queryable, request: FastifyRequest | null, input: AuditInput): Promise<void> {
  await writeAuditOutbox(db, describeAuditEvent(request, input));
}
