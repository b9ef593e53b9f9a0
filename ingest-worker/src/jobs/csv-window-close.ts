/**
 * An upload asked to close its open-ended unit operation (mapping.close_open_end): in the transaction
 * that completes the job, the unit operation's end becomes the last reading the upload wrote, and the
 * change is audited as an update of the unit operation by whoever made the upload. Closing only
 * shortens a window, so it cannot overlap another unit operation's.
 */
import { createHash } from 'node:crypto';
import type { PoolClient } from '@bioprocess/shared/server/postgres';
import { writeAuditOutbox } from '@bioprocess/shared/server/audit-outbox';
import { jobWithCreator } from '@bioprocess/shared/server/ingest-jobs';
import { closeOpenUnitOperationWindow } from '@bioprocess/shared/server/unit-operations-repository';

/** The update's event id, derived from the job's so a retried completion stores it once. */
function windowEventId(jobId: string): string {
  const hex = createHash('sha256').update(`unit-operation-window-closed:${jobId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const windowOf = (row: { start_time: Date | null; end_time: Date | null }) => ({
  start_time: row.start_time?.toISOString() ?? null, end_time: row.end_time?.toISOString() ?? null,
});

export async function closeWindowAtLastReading(
  client: PoolClient,
  job: { jobId: string; organizationId: number; unitOperationId: number; lastReadingMs: number },
): Promise<void> {
  const closed = await closeOpenUnitOperationWindow(client, job.organizationId, job.unitOperationId, job.lastReadingMs);
  if (!closed) return;
  const creator = await jobWithCreator(client, job.jobId);
  await writeAuditOutbox(client, {
    event_id: windowEventId(job.jobId),
    event_type: 'data',
    action: 'update',
    resource_type: 'unit_operation',
    resource_id: String(job.unitOperationId),
    success: true,
    user_id: creator?.user_id ?? null,
    user_email: creator?.user_email ?? (creator?.api_key_name ? `API key '${creator.api_key_name}'` : null),
    organization_id: job.organizationId,
    ip: null,
    changes: { before: windowOf(closed.before), after: { ...windowOf(closed.after), closed_at_last_reading_of_upload: job.jobId } },
  });
}
