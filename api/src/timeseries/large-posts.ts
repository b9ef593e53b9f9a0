/**
 * A large bulk post (more than BATCHED_POST_MAX_POINTS points): its data is spooled to files and
 * fsynced (shared/src/server/bulk-spool.ts) before its job row is committed, so the row never names
 * data that is not on disk. Files of a row that was not created (a replayed idempotency key) are removed
 * at once; those of a request that died before its row are left to the sweeper.
 */
import { randomUUID } from 'node:crypto';
import { removeSpooledData, spoolBulkData } from '@bioprocess/shared/server/bulk-spool';
import type { RequestPrincipal } from '../auth/principal.ts';
import type { AppDeps } from '../platform/deps.ts';
import { createIngestJob, type IngestJobRow } from '../ingest-jobs/jobs.ts';
import type { BulkJob } from './bulk-batches.ts';
import { enqueueIngest } from './enqueue.ts';

export async function acceptLargePost(deps: AppDeps, principal: RequestPrincipal, job: BulkJob): Promise<{ job: IngestJobRow; created: boolean }> {
  const id = randomUUID();
  await spoolBulkData(deps.env.UPLOAD_DIR, id, job.data ?? []);
  const accepted = await createIngestJob(deps.pg, principal, { ...job, id, data: undefined, request: { ...job.request, spooled: true } });
  if (accepted.created) await enqueueIngest(deps, accepted.job);
  else await removeSpooledData(deps.env.UPLOAD_DIR, [id]);
  return accepted;
}
