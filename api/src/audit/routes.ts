/**
 * The audit log: recent events as JSON and a streamed CSV export. Admins see their organisation's
 * events, superusers every organisation's. The queries live in repository.ts.
 */
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  AUDIT_EXPORT_COLUMNS,
  auditExportQuerySchema,
  auditLogQuerySchema,
  auditLogSchema,
  type AuditLog,
} from '@bioprocess/shared/auth-contracts';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from './record.ts';
import { resourceNames } from './resource-names.ts';
import { auditExportBatches, listRecentAuditLogs, type AuditLogRow, type AuditScope } from './repository.ts';
import { csvRow } from '@bioprocess/shared/csv/write';
import {
  auditCheckpointListQuerySchema, auditCheckpointParamsSchema, auditCheckpointSchema, auditVerificationQuerySchema,
  auditVerificationSchema, signedCheckpointSchema,
} from '@bioprocess/shared/audit-verification';
import { notFound } from '../platform/http-error.ts';
import { checkpointFile, findCheckpoint, listCheckpoints, verifyAuditChain } from './verification.ts';

interface AuditFilter {
  start_date?: string;
  end_date?: string;
  organization_id?: number;
}

/** The caller's organisation unless superuser (who may name one, or none for all), and the date range. */
function auditScope(request: FastifyRequest, filter: AuditFilter): AuditScope {
  const principal = principalOf(request);
  return {
    organizationId: principal.superuser ? filter.organization_id ?? null : principal.organizationId,
    startDate: filter.start_date ?? null,
    endDate: filter.end_date ?? null,
  };
}

/** The chain an admin may verify: their organisation's; a superuser names any (0: events of none). */
function chainOf(request: FastifyRequest, organizationId: number | undefined): number {
  const principal = principalOf(request);
  return principal.superuser && organizationId !== undefined ? organizationId : principal.organizationId;
}

function toAuditLog(row: AuditLogRow): AuditLog {
  return { ...(row as unknown as AuditLog), created_at: (row.created_at as Date).toISOString() };
}

async function* auditCsv(pool: Pool, scope: AuditScope): AsyncGenerator<string> {
  yield csvRow(AUDIT_EXPORT_COLUMNS);
  for await (const rows of auditExportBatches(pool, scope)) {
    yield rows.map((row) => csvRow(AUDIT_EXPORT_COLUMNS.map((column) => row[column]))).join('');
  }
}

export async function auditRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/audit/logs', {
    config: { access: 'view_audit_logs' },
    schema: { tags: ['audit'], summary: 'Recent audit events, newest first, each with the name of its resource (as recorded, else as it is now)', querystring: auditLogQuerySchema, response: { 200: z.array(auditLogSchema) } },
  }, async (request) => {
    const scope = auditScope(request, request.query);
    const rows = await listRecentAuditLogs(deps.pg, scope, request.query.limit);
    const names = await resourceNames(deps.pg, rows, scope.organizationId);
    return rows.map((row, index) => ({ ...toAuditLog(row), resource_name: names[index] ?? null }));
  });

  app.get('/api/v1/audit/logs/export', {
    config: { access: 'view_audit_logs' },
    schema: { tags: ['audit'], summary: 'The audit log as a CSV download (streamed)', querystring: auditExportQuerySchema },
  }, async (request, reply) => {
    const scope = auditScope(request, request.query);
    await recordAudit(deps.pg, request, { event_type: 'audit.exported', action: 'export', resource_type: 'audit_log', changes: { after: { filter: request.query } } });
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-logs-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(auditCsv(deps.pg, scope)));
  });

  app.get('/api/v1/audit/verification', {
    config: { access: 'view_audit_logs' },
    schema: {
      tags: ['audit'],
      summary: "Verifies the organisation's audit hash chain and its signed checkpoints; names the first edited, removed, reordered or inserted entry",
      querystring: auditVerificationQuerySchema,
      response: { 200: auditVerificationSchema },
    },
  }, async (request) => verifyAuditChain(deps.pg, chainOf(request, request.query.organization_id)));

  app.get('/api/v1/audit/checkpoints', {
    config: { access: 'view_audit_logs' },
    schema: {
      tags: ['audit'], summary: "The organisation's signed audit checkpoints, latest first (at most 100)",
      querystring: auditCheckpointListQuerySchema, response: { 200: z.array(auditCheckpointSchema) },
    },
  }, async (request) => listCheckpoints(deps.pg, chainOf(request, request.query.organization_id)));

  app.get('/api/v1/audit/checkpoints/:id', {
    config: { access: 'view_audit_logs' },
    schema: {
      tags: ['audit'], summary: 'One signed checkpoint as a file for the offline verifier (npm run audit:verify)',
      params: auditCheckpointParamsSchema, response: { 200: signedCheckpointSchema },
    },
  }, async (request, reply) => {
    const checkpoint = await findCheckpoint(deps.pg, request.params.id);
    const principal = principalOf(request);
    if (!checkpoint || (!principal.superuser && checkpoint.organization_id !== principal.organizationId)) throw notFound('Checkpoint not found');
    return reply
      .header('content-disposition', `attachment; filename="audit-checkpoint-${checkpoint.organization_id}-${checkpoint.chain_seq}.json"`)
      .send(checkpointFile(checkpoint));
  });
}
