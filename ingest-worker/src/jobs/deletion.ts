/** A queued range deletion: tombstones over the existing keys, then fresh rollups for the range. */
import type { DeletionPayload } from '@bioprocess/shared/queues';
import type { WorkerContext } from '../context.ts';
import { countLiveReadings, writeTombstones } from '../deletions.ts';
import { recomputeRollups } from '../rollups/recompute.ts';
import { startJob, updateProgress } from '@bioprocess/shared/server/ingest-jobs';
import { markCompleted } from '../job-store.ts';
import { announcePointsStored } from '@bioprocess/shared/server/points-stored';

export async function processDeletion(context: WorkerContext, payload: DeletionPayload): Promise<void> {
  const job = await startJob(context.pg, payload.job_id);
  if (!job || job.state === 'completed' || job.state === 'failed') return;
  const range = {
    organizationId: payload.organization_id,
    instrumentIds: payload.instrument_ids,
    startMs: payload.start_ms,
    endMs: payload.end_ms,
  };
  // Counted once, before the tombstones: a retried job reports the same number.
  let pointsRemoved = (job.checkpoint as { points_removed?: number } | null)?.points_removed;
  if (pointsRemoved === undefined) {
    pointsRemoved = await countLiveReadings(context.clickhouse, range, payload.version_seq);
    await updateProgress(context.pg, payload.job_id, {}, { points_removed: pointsRemoved });
  }
  await writeTombstones(context.clickhouse, range, payload.version_seq);
  await recomputeRollups(context.clickhouse, context.pg, [{ range, points: pointsRemoved }]);
  await markCompleted(context.pg, payload.job_id, {
    instruments: payload.instrument_ids.length, start_ms: payload.start_ms, end_ms: payload.end_ms, points_removed: pointsRemoved,
  });
  await announcePointsStored(context.redis, context.env.QUEUE_PREFIX, {
    organizationId: payload.organization_id, instrumentIds: payload.instrument_ids, fromMs: payload.start_ms, toMs: payload.end_ms,
    kind: 'deletion', jobIds: [payload.job_id], points: pointsRemoved,
  }, context.logger);
}
