/**
 * The review-by-exception report of a run: what a reviewer must look at instead of the whole record.
 * Every change after a record's first entry (field by field, old and new, who, when, reason) and every
 * deletion of the run, its unit operations and their samples, read from the audit trail (audit_logs,
 * and the outbox for events the audit-worker has not stored yet, so the report is complete the moment
 * a change commits); every failed upload or deletion job and every upload that replaced readings;
 * every review transition; and every signature with its validity now.
 */
import { listExceptionalJobsOfUnitOperations } from '@bioprocess/shared/server/ingest-jobs';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { listRunUnitOperationIds } from '@bioprocess/shared/server/unit-operations-repository';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import type { ReviewReport, ReviewReportEntry, ReviewState } from '@bioprocess/shared/run-review';
import { organizationTimeZone } from '../organizations/settings.ts';
import { listRecordSignatures } from '../signatures/repository.ts';
import { runContentHash } from '../signatures/run-content.ts';
import { requireRun } from './repository.ts';

interface AuditEventRow {
  event_type: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  user_email: string | null;
  changes: { before?: Record<string, unknown> | null; after?: Record<string, unknown> | null } | null;
  reason: string | null;
  created_at: Date;
}

/** Fields that change by themselves or with every write: not a change a reviewer needs to see. */
const UNREVIEWED_FIELDS = new Set(['updated_at', 'status', 'created_at']);

function display(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function recordName(row: AuditEventRow, runName: string): string {
  const state = row.changes?.before ?? row.changes?.after ?? {};
  if (row.resource_type === 'run') return `Run ${runName}`;
  if (row.resource_type === 'unit_operation') return `Unit operation ${display(state.type) ?? ''} #${row.resource_id}`.replace('  ', ' ');
  if (row.resource_type === 'sample') return `Sample ${display(state.sample_id) ?? row.resource_id} (unit operation #${display(state.unit_operation_id)})`;
  return `${row.resource_type} ${row.resource_id}`;
}

function eventEntries(row: AuditEventRow, runName: string): ReviewReportEntry[] {
  const base = { at: toIsoTimestamp(row.created_at), who: row.user_email, record: recordName(row, runName), reason: row.reason };
  if (row.event_type === 'run.review') {
    const after = row.changes?.after ?? {};
    return [{
      ...base, kind: 'review', field: 'review state', old_value: display(row.changes?.before?.state_label), new_value: display(after.state_label),
      reason: row.reason ?? display(after.reason), detail: row.action,
    }];
  }
  if (row.action === 'delete') {
    return [{ ...base, kind: 'deletion', field: null, old_value: display(row.changes?.before), new_value: null, detail: 'deleted' }];
  }
  const before = row.changes?.before ?? {};
  const after = row.changes?.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !UNREVIEWED_FIELDS.has(field)).sort();
  return fields
    .filter((field) => JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null))
    .map((field) => ({ ...base, kind: 'change' as const, field, old_value: display(before[field]), new_value: display(after[field]), detail: null }));
}

/** `unitOperationIds`: the run's unit operations now; those it had before are found in the events themselves. */
async function auditEventsOfRun(db: Queryable, organizationId: number, runId: number, unitOperationIds: readonly number[]): Promise<AuditEventRow[]> {
  // The reason (its pick-list code, then its text) is read through to_jsonb so this query does not
  // depend on the column's migration; events still in the outbox carry the same fields in their JSON.
  const { rows } = await db.query<AuditEventRow>(
    `WITH events AS (
       SELECT a.event_type, a.action, a.resource_type, a.resource_id, a.user_email, a.changes, a.created_at,
              NULLIF(concat_ws(': ', to_jsonb(a)->>'change_reason_code', to_jsonb(a)->>'change_reason'), '') AS reason, a.event_id
         FROM audit_logs a WHERE a.organization_id = $1 AND a.resource_type IN ('run', 'unit_operation', 'sample')
       UNION ALL
       SELECT o.event->>'event_type', o.event->>'action', o.event->>'resource_type', o.event->>'resource_id', o.event->>'user_email',
              o.event->'changes', o.created_at, NULLIF(concat_ws(': ', o.event->>'change_reason_code', o.event->>'change_reason'), ''), o.event_id
         FROM audit_outbox o WHERE (o.event->>'organization_id')::bigint = $1 AND o.event->>'resource_type' IN ('run', 'unit_operation', 'sample')
     ),
     run_unit_operations AS (
       SELECT unnest($3::text[]) AS id
       UNION
       SELECT resource_id FROM events WHERE resource_type = 'unit_operation'
          AND (changes->'before'->>'run_id' = $2::text OR changes->'after'->>'run_id' = $2::text)
     )
     SELECT DISTINCT ON (event_id) event_type, action, resource_type, resource_id, user_email, changes, reason, created_at
       FROM events
      WHERE (action IN ('update', 'delete') OR event_type = 'run.review')
        AND ((resource_type = 'run' AND resource_id = $2::text)
          OR (resource_type = 'unit_operation' AND resource_id IN (SELECT id FROM run_unit_operations))
          OR (resource_type = 'sample' AND (changes->'before'->>'unit_operation_id' IN (SELECT id FROM run_unit_operations)
                                         OR changes->'after'->>'unit_operation_id' IN (SELECT id FROM run_unit_operations))))
      ORDER BY event_id`,
    [organizationId, runId, unitOperationIds.map(String)],
  );
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
}

async function exceptionalJobsOfRun(db: Queryable, organizationId: number, unitOperationIds: readonly number[]): Promise<ReviewReportEntry[]> {
  const jobs = await listExceptionalJobsOfUnitOperations(db, organizationId, unitOperationIds);
  return jobs.map((job) => {
    const unitOperation = `unit operation #${display(job.request.unit_operation_id ?? job.request.created_unit_operation_id)}`;
    const file = display(job.request.file_name);
    const what = job.kind === 'csv' ? `CSV upload ${file ?? ''} into ${unitOperation}` : `Deletion of readings in ${unitOperation}`;
    const outcome = job.state === 'failed' ? `failed: ${job.error ?? 'no message'}`
      : job.kind === 'csv' ? 'replaced the readings of its instruments in the window' : `deleted readings (${job.state})`;
    return {
      kind: job.kind === 'deletion' ? 'deletion' as const : 'upload' as const, at: toIsoTimestamp(job.created_at), who: job.created_by_email,
      record: what.replace('  ', ' '), field: null, old_value: null, new_value: null, reason: null, detail: `${outcome} (job ${job.id})`,
    };
  });
}

export async function buildReviewReport(db: Queryable, organizationId: number, runId: number, state: ReviewState): Promise<ReviewReport> {
  const run = await requireRun(db, organizationId, runId);
  const unitOperationIds = await listRunUnitOperationIds(db, organizationId, runId);
  const [events, jobs, contentHash, timeZone] = await Promise.all([
    auditEventsOfRun(db, organizationId, runId, unitOperationIds), exceptionalJobsOfRun(db, organizationId, unitOperationIds),
    runContentHash(db, organizationId, runId), organizationTimeZone(db, organizationId),
  ]);
  const signatures = await listRecordSignatures(db, organizationId, runId, contentHash);
  const signatureEntries: ReviewReportEntry[] = signatures.map((signature) => ({
    kind: 'signature', at: signature.signed_at, who: `${signature.signer_name} <${signature.signer_email}>`, record: `Run ${run.name}`,
    field: signature.meaning_label, old_value: null, new_value: signature.validity, reason: signature.revoke_reason,
    detail: `${signature.meaning_label} by ${signature.signer_name} at ${signature.signed_at_local}; ${signature.validity}`
      + (signature.revoked_at ? ` (revoked ${signature.revoked_at})` : '') + `; sha256 ${signature.content_sha256}`,
  }));
  const entries = [...events.flatMap((row) => eventEntries(row, run.name)), ...jobs, ...signatureEntries]
    .sort((a, b) => a.at.localeCompare(b.at));
  return {
    run: { id: Number(run.id), name: run.name, created_at: toIsoTimestamp(run.created_at) },
    generated_at: new Date().toISOString(), time_zone: timeZone, state, content_sha256: contentHash, entries, signatures,
  };
}
