/**
 * Ingest job status: GET /api/v1/ingest-jobs/{id} and its server-sent-event stream for live progress
 * bars. The stream is read with fetch (not EventSource) so the bearer token travels in a header.
 */
import { z } from 'zod';
import { ingestJobStatusSchema } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { findIngestJob, isFinished, toJobStatus } from './jobs.ts';

const params = z.object({ id: z.string().min(1) });
/** How often the event stream looks at the job row, and the keep-alive comment interval. */
const EVENT_POLL_MS = 250;
const KEEP_ALIVE_MS = 15_000;

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
    let job = await findIngestJob(deps.pg, principal.organizationId, request.params.id);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    let closed = false;
    raw.once('close', () => { closed = true; });
    let lastSent = '';
    let lastWrite = Date.now();
    for (;;) {
      const status = JSON.stringify(toJobStatus(job));
      if (status !== lastSent) {
        raw.write(`event: progress\ndata: ${status}\n\n`);
        lastSent = status;
        lastWrite = Date.now();
      } else if (Date.now() - lastWrite > KEEP_ALIVE_MS) {
        raw.write(': keep-alive\n\n');
        lastWrite = Date.now();
      }
      if (isFinished(job.state) || closed) break;
      // Progress is read every EVENT_POLL_MS; the end is sent as soon as the job's finish is announced.
      await deps.jobEvents.wait(job.id, EVENT_POLL_MS).woken;
      try {
        job = await findIngestJob(deps.pg, principal.organizationId, request.params.id);
      } catch (error) {
        request.log.warn({ err: error }, 'ingest job event stream stopped');
        break;
      }
    }
    if (!closed) {
      raw.write(`event: end\ndata: ${lastSent}\n\n`);
      raw.end();
    }
  });
}
