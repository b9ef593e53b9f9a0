/**
 * The records of an organisation as CSV or a JSON array, streamed from a server-side cursor so memory
 * does not grow with the table. The columns are named here, one list per entity, so a column added to
 * a table is exported only once someone decides it belongs in an export.
 */
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { RecordExportEntity } from '@bioprocess/shared/exports';
import { csvRow } from '@bioprocess/shared/csv/write';

const FETCH_ROWS = 1_000;

/** Exported column name and its SQL expression (from the entity's table). */
export const RECORD_COLUMNS: Record<RecordExportEntity, { table: string; columns: Array<[string, string]> }> = {
  facilities: { table: 'facilities', columns: [['id', 'id'], ['name', 'name'], ['type', 'type'], ['country', 'country'], ['address', 'address'], ['created_at', 'created_at'], ['updated_at', 'updated_at']] },
  equipment: { table: 'equipment', columns: [['id', 'id'], ['facility_id', 'facility_id'], ['name', 'name'], ['type', 'type'], ['oem', 'oem'], ['status', 'status'], ['created_at', 'created_at'], ['updated_at', 'updated_at']] },
  instruments: { table: 'instruments', columns: [['id', 'id'], ['equipment_id', 'equipment_id'], ['name', 'name'], ['type', 'type'], ['unit', 'unit'], ['alias', 'alias'], ['created_at', 'created_at'], ['updated_at', 'updated_at']] },
  runs: { table: 'runs', columns: [['id', 'id'], ['facility_id', 'facility_id'], ['name', 'name'], ['strain', 'strain'], ['target', 'target'], ['description', 'description'], ['start_time', 'start_time'], ['end_time', 'end_time'], ['scale_liters', 'scale_liters'], ['scale_grams', 'scale_grams'], ['created_at', 'created_at'], ['updated_at', 'updated_at'],
    // A signed record is exported with its signatures: review state, then meaning, printed name, time (UTC) and the signed hash of each.
    ['review_state', "coalesce((SELECT rr.state FROM run_reviews rr WHERE rr.run_id = runs.id), 'draft')"],
    ['signatures', `(SELECT string_agg(s.meaning_label || ': ' || s.signer_name || ', ' || to_char(s.signed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
      || CASE WHEN s.revoked_at IS NULL THEN '' ELSE ' (revoked)' END || ', sha256 ' || s.content_sha256, '; ' ORDER BY s.id)
      FROM signatures s WHERE s.organization_id = runs.organization_id AND s.record_type = 'run' AND s.record_id = runs.id)`]] },
  unit_operations: { table: 'unit_operations', columns: [['id', 'id'], ['run_id', 'run_id'], ['type', 'type'], ['equipment_id', 'equipment_id'], ['start_time', 'start_time'], ['end_time', 'end_time'], ['created_at', 'created_at'], ['updated_at', 'updated_at']] },
  comments: { table: 'comments', columns: [['id', 'id'], ['unit_operation_id', 'unit_operations_id'], ['author_id', 'author'], ['timestamp', 'timestamp'], ['content', 'content'], ['color', 'color'], ['created_at', 'created_at'], ['updated_at', 'updated_at']] },
};

/** The exported columns that hold a PostgreSQL timestamptz. */
const TIMESTAMP_COLUMNS: ReadonlySet<string> = new Set(['created_at', 'updated_at', 'start_time', 'end_time', 'timestamp']);

/**
 * A column's SQL in the export. PostgreSQL keeps timestamps to the microsecond, and a JavaScript Date
 * would cut them to the millisecond, so timestamps leave the database as ISO 8601 text in UTC with
 * all six fraction digits ('2021-05-02T07:12:51.123456Z').
 */
function exportedExpression(name: string, expression: string): string {
  if (!TIMESTAMP_COLUMNS.has(name)) return expression;
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

export function recordColumnNames(entity: RecordExportEntity): string[] {
  return RECORD_COLUMNS[entity].columns.map(([name]) => name);
}

export interface RecordTally {
  rows: number;
}

function jsonValue(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

/** The entity's rows of one organisation, in id order, as CSV text or a JSON array, in chunks. */
export async function* recordChunks(pool: Pool, organizationId: number, entity: RecordExportEntity, format: 'csv' | 'json', tally: RecordTally): AsyncGenerator<string> {
  const { table, columns } = RECORD_COLUMNS[entity];
  const names = columns.map(([name]) => name);
  const client = await pool.connect();
  let finished = false;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`DECLARE record_export NO SCROLL CURSOR FOR
      SELECT ${columns.map(([name, expression]) => `${exportedExpression(name, expression)} AS "${name}"`).join(', ')} FROM ${table} WHERE organization_id = $1 ORDER BY id`, [organizationId]);
    yield format === 'csv' ? csvRow(names) : '[';
    let first = true;
    for (;;) {
      const { rows } = await client.query(`FETCH ${FETCH_ROWS} FROM record_export`);
      if (rows.length === 0) break;
      tally.rows += rows.length;
      if (format === 'csv') {
        yield rows.map((row) => csvRow(names.map((name) => row[name]))).join('');
      } else {
        const text = rows.map((row) => JSON.stringify(Object.fromEntries(names.map((name) => [name, jsonValue(row[name])])))).join(',\n');
        yield first ? `\n${text}` : `,\n${text}`;
        first = false;
      }
    }
    if (format === 'json') yield '\n]\n';
    await client.query('COMMIT');
    finished = true;
  } finally {
    // Reached too when the client disconnects mid-download (the stream returns the generator early).
    if (!finished) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}
