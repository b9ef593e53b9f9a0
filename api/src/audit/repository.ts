/**
 * Audit rows in PostgreSQL, read only (the application never updates or deletes them): recent events
 * and the export's stream, which reads through a server-side cursor so its memory use does not grow
 * with the size of the table.
 */
import { AUDIT_EXPORT_COLUMNS } from '@bioprocess/shared/auth-contracts';
import type { CsvValue } from '@bioprocess/shared/csv/write';
import type { Pool } from '@bioprocess/shared/server/postgres';

const AUDIT_COLUMNS = 'id, event_id, event_type, user_id, user_email, action, resource_type, resource_id, success, organization_id, ip, changes, created_at, change_reason, change_reason_code, chain_seq';

/**
 * The export's columns as selected: created_at to the millisecond in UTC, exactly as the chain's hash
 * covers it, so the offline verifier recomputes hashes from the file alone.
 */
const EXPORT_SELECT = AUDIT_EXPORT_COLUMNS.map((column) => column === 'created_at'
  ? `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`
  : column).join(', ');

/** Rows fetched per round trip of the export cursor. */
const EXPORT_BATCH_SIZE = 1_000;

/** Which events: one organisation's (null: every organisation's), optionally within a date range. */
export interface AuditScope {
  organizationId: number | null;
  startDate: string | null;
  endDate: string | null;
}

const SCOPE_WHERE = `WHERE ($1::bigint IS NULL OR organization_id = $1)
    AND ($2::timestamptz IS NULL OR created_at >= $2)
    AND ($3::timestamptz IS NULL OR created_at <= $3)`;

/** An audit row as stored (the columns of the recent-events list). */
export interface AuditLogRow {
  resource_type: string | null;
  resource_id: string | null;
  changes: unknown;
  created_at: Date;
  [column: string]: unknown;
}

/** One row of the export: its columns' values, ready for a CSV cell. */
export type AuditExportRow = Record<string, CsvValue>;

const scopeParams = (scope: AuditScope) => [scope.organizationId, scope.startDate, scope.endDate];

/** The most recent events, newest first, in the order of their changes. */
export async function listRecentAuditLogs(pool: Pool, scope: AuditScope, limit: number): Promise<AuditLogRow[]> {
  const { rows } = await pool.query<AuditLogRow>(
    `SELECT ${AUDIT_COLUMNS} FROM audit_logs ${SCOPE_WHERE} ORDER BY created_at DESC, change_seq DESC NULLS LAST, id DESC LIMIT $4`,
    [...scopeParams(scope), limit],
  );
  return rows;
}

/** Every event of the scope, oldest first, in batches of the export's columns. */
export async function* auditExportBatches(pool: Pool, scope: AuditScope): AsyncGenerator<AuditExportRow[]> {
  const client = await pool.connect();
  let finished = false;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(
      `DECLARE audit_export NO SCROLL CURSOR FOR SELECT ${EXPORT_SELECT} FROM audit_logs ${SCOPE_WHERE}
        ORDER BY created_at, change_seq NULLS FIRST, id`,
      scopeParams(scope),
    );
    for (;;) {
      const { rows } = await client.query<AuditExportRow>(`FETCH ${EXPORT_BATCH_SIZE} FROM audit_export`);
      if (rows.length === 0) break;
      yield rows;
    }
    await client.query('COMMIT');
    finished = true;
  } finally {
    // Reached too when the client disconnects mid-download (the stream returns the generator early).
    if (!finished) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}
