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
}
