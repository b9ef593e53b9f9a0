/**
 * The audit log: recent events as JSON and a CSV export. Admins see their organisation's
 * events, superusers every organisation's. The export streams from a server-side cursor, so its
 * memory use does not grow with the size of the table. The application never updates or deletes it.
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
import { csvRow } from '@bioprocess/shared/csv/write';

const AUDIT_COLUMNS = 'id, event_id, event_type, user_id, user_email, action, resource_type, resource_id, success, organization_id, ip, changes, created_at';

/** Rows fetched per round trip of the export cursor. */
const EXPORT_BATCH_SIZE = 1_000;

interface AuditFilter {
  start_date?: string;
  end_date?: string;
  organization_id?: number;
}

/** WHERE clause and parameters: the caller's organisation unless superuser, then the date range. */
function auditWhere(request: FastifyRequest, filter: AuditFilter): { where: string; params: unknown[] } {
  const principal = principalOf(request);
  const organizationId = principal.superuser ? filter.organization_id ?? null : principal.organizationId;
  const params: unknown[] = [organizationId, filter.start_date ?? null, filter.end_date ?? null];
  return {
    where: `WHERE ($1::bigint IS NULL OR organization_id = $1)
              AND ($2::timestamptz IS NULL OR created_at >= $2)
              AND ($3::timestamptz IS NULL OR created_at <= $3)`,
    params,
  };
}

function toAuditLog(row: Record<string, unknown>): AuditLog {
  return { ...(row as unknown as AuditLog), created_at: (row.created_at as Date).toISOString() };
}

async function* auditCsv(pool: Pool, where: string, params: unknown[]): AsyncGenerator<string> {
  const client = await pool.connect();
  let finished = false;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`DECLARE audit_export NO SCROLL CURSOR FOR SELECT ${AUDIT_EXPORT_COLUMNS.join(', ')} FROM audit_logs ${where} ORDER BY created_at, change_seq NULLS FIRST, id`, params);
    yield csvRow(AUDIT_EXPORT_COLUMNS);
    for (;;) {
      const { rows } = await client.query(`FETCH ${EXPORT_BATCH_SIZE} FROM audit_export`);
      if (rows.length === 0) break;
      yield rows.map((row) => csvRow(AUDIT_EXPORT_COLUMNS.map((column) => row[column]))).join('');
    }
    await client.query('COMMIT');
    finished = true;
  } finally {
    // Reached too when the client disconnects mid-download (the stream returns the generator early).
    if (!finished) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

export async function auditRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/audit/logs', {
    config: { access: 'view_audit_logs' },
    schema: { tags: ['audit'], summary: 'Recent audit events, newest first, each with the name of its resource (as recorded, else as it is now)', querystring: auditLogQuerySchema, response: { 200: z.array(auditLogSchema) } },
  }, async (request) => {
    const { where, params } = auditWhere(request, request.query);
    const { rows } = await deps.pg.query(
      `SELECT ${AUDIT_COLUMNS} FROM audit_logs ${where} ORDER BY created_at DESC, change_seq DESC NULLS LAST, id DESC LIMIT $4`,
      [...params, request.query.limit],
    );
    const names = await resourceNames(deps.pg, rows, params[0] as number | null);
    return rows.map((row, index) => ({ ...toAuditLog(row), resource_name: names[index] ?? null }));
  });

  app.get('/api/v1/audit/logs/export', {
    config: { access: 'view_audit_logs' },
    schema: { tags: ['audit'], summary: 'The audit log as a CSV download (streamed)', querystring: auditExportQuerySchema },
  }, async (request, reply) => {
    const { where, params } = auditWhere(request, request.query);
    await recordAudit(deps.pg, request, { event_type: 'audit.exported', action: 'export', resource_type: 'audit_log', changes: { after: { filter: request.query } } });
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-logs-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(auditCsv(deps.pg, where, params)));
  });
}
