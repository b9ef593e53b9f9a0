/**
 * The audit trail of imports and data deletions. Only the worker knows what a CSV upload wrote or a
 * deletion removed, so the event is built here from the finished job's row (who asked, the file,
 * the instruments by name, points written, the range replaced, points removed) and written into the
 * audit outbox in the transaction that finishes the job (job-store.ts), so no upload or deletion ends
 * without its event and no event exists for one that did not end. The api relays the outbox to the
 * audit-worker. The event id is the job id: an event handed over twice is stored once.
 */
import type { AuditOutboxEvent } from '@bioprocess/shared/queues';
import type { PoolClient, Queryable } from '@bioprocess/shared/server/postgres';
import { writeAuditOutbox } from '@bioprocess/shared/server/audit-outbox';
import { jobWithCreator } from '@bioprocess/shared/server/ingest-jobs';
import { instrumentNames } from '@bioprocess/shared/server/instruments-repository';
import { listUnitOperationsWithRunName } from '@bioprocess/shared/server/unit-operations-repository';

const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

async function namesOfInstruments(pool: Queryable, organizationId: number, ids: number[]): Promise<Map<number, string>> {
  const rows = await instrumentNames(pool, ids, organizationId);
  return new Map(rows.map((row) => [row.id, row.name]));
}

async function unitOperationLabel(pool: Queryable, organizationId: number, id: number): Promise<string> {
  const [row] = await listUnitOperationsWithRunName(pool, organizationId, { ids: [id] });
  return row ? `${row.type.replace(/_/g, ' ')} of run '${row.run_name}'` : `unit operation ${id}`;
}

/** The audit event of a finished CSV upload or range deletion; null for other jobs or unfinished ones. */
export async function buildJobAuditEvent(pool: Queryable, jobId: string): Promise<AuditOutboxEvent | null> {
  const job = await jobWithCreator(pool, jobId);
  if (!job || (job.kind !== 'csv' && job.kind !== 'deletion') || (job.state !== 'completed' && job.state !== 'failed')) return null;
  const request = job.request;
  const result = job.result ?? {};
  const succeeded = job.state === 'completed';
  const base = {
    event_id: job.id,
    event_type: 'data',
    success: succeeded,
    user_id: job.user_id,
    user_email: job.user_email ?? (job.api_key_name ? `API key '${job.api_key_name}'` : null),
    organization_id: job.organization_id,
    ip: null,
  };
  if (job.kind === 'csv') {
    const mapping = request.mapping as { columns?: Array<{ column: string; instrument_id: number }> } | undefined;
    const columns = mapping?.columns ?? [];
    const names = await namesOfInstruments(pool, job.organization_id, columns.map((column) => column.instrument_id));
    const unitOperationId = Number(request.unit_operation_id);
    return {
      ...base,
      action: 'import',
      resource_type: 'unit_operation',
      resource_id: String(unitOperationId),
      changes: {
        before: null,
        after: {
          unit_operation: await unitOperationLabel(pool, job.organization_id, unitOperationId),
          file_name: request.file_name ?? null,
          file_bytes: request.bytes ?? null,
          instruments: columns.map((column) => ({ id: column.instrument_id, name: names.get(column.instrument_id) ?? null, column: column.column })),
          points_written: succeeded ? result.points_written ?? 0 : 0,
          start_time: result.start_time ?? null,
          end_time: result.end_time ?? null,
          replaced_range: result.replaced_range ?? null,
          points_removed: result.points_removed ?? 0,
          ...(succeeded ? {} : { error: job.error, unit_operation_removed: request.created_unit_operation_id !== undefined }),
        },
      },
    };
  }
  const instrumentIds = ((request.instrument_ids as number[] | undefined) ?? []).map(Number);
  const names = await namesOfInstruments(pool, job.organization_id, instrumentIds);
  const unitOperationId = typeof request.unit_operation_id === 'number' ? request.unit_operation_id : null;
  return {
    ...base,
    action: 'delete_readings',
    resource_type: unitOperationId !== null ? 'unit_operation' : instrumentIds.length === 1 ? 'instrument' : null,
    resource_id: unitOperationId !== null ? String(unitOperationId) : instrumentIds.length === 1 ? String(instrumentIds[0]) : null,
    changes: {
      before: {
        instruments: instrumentIds.map((id) => ({ id, name: names.get(id) ?? null })),
        start_time: iso(request.start_ms),
        end_time: iso(request.end_ms),
        points_removed: succeeded ? result.points_removed ?? 0 : 0,
        ...(unitOperationId !== null ? { unit_operation_id: unitOperationId } : {}),
      },
      after: succeeded ? null : { error: job.error },
    },
  };
}

/**
 * In the transaction that just finished the job: writes its audit event when it is an upload or a
 * deletion (other jobs are not audited). Reads the job row as this transaction sees it.
 */
export async function writeJobAuditEvent(client: PoolClient, jobId: string): Promise<void> {
  const event = await buildJobAuditEvent(client, jobId);
  if (event) await writeAuditOutbox(client, event);
}
