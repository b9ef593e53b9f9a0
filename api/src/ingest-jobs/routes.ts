/**
 * Ingest job status: GET /api/v1/ingest-jobs/{id} and its server-sent-event stream for live progress
 * bars (platform/job-event-stream.ts).
 */
import { z } from 'zod';
import { ingestJobStatusSchema } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { findIngestJob, isFinished, toJobStatus } from './jobs.ts';
import { streamJobEvents } from '../platform/job-event-stream.ts';

const params = z.object({ id: z.string().min(1) });

export async function ingestJobRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/ingest-jobs/:id', {
    config: { access: 'read' },
    schema: { summary: 'State, progress and result of an ingest job', params, response: { 200: ingestJobStatusSchema } },
  }, async (request) => {
    const principal = principalOf(request);
    return toJobStatus(await findIngestJob(deps.pg, principal.organizationId, request.params.id));
  });

  app.get('/api/v1/ingest-jobs/:id/events', {
    config: { access: 'read' },
    schema: { summary: 'Server-sent events (event: progress, data: the job status) until the job finishes', params },
  }, async (request, reply) => {
    const principal = principalOf(request);
    // Answer 404 as JSON before switching the response to an event stream.
    const first = await findIngestJob(deps.pg, principal.organizationId, request.params.id);
    await streamJobEvents(request, reply, deps.jobEvents, {
      id: first.id,
      first,
      load: () => findIngestJob(deps.pg, principal.organizationId, request.params.id),
      status: toJobStatus,
      finished: (job) => isFinished(job.state),
    });
  });
}
