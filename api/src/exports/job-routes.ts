/**
 * Export jobs: the list of recent ones, status, server-sent progress events (platform/job-event-stream.ts)
 * and the download of the finished file. Scoped by organisation (another organisation's job is 404) and
 * by the export permission (editors and admins; the organisation archive's job: admins only, like the
 * archive). The list shows an admin the organisation's jobs, and an editor (or an API key) the
 * time-series exports they asked for: what each may follow and download.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { can } from '@bioprocess/shared/permissions';
import { EXPORT_JOB_KINDS, exportJobListQuerySchema, exportJobStatusSchema, isExportJobFinished } from '@bioprocess/shared/exports';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { conflict, forbidden, HttpError } from '../platform/http-error.ts';
import { streamJobEvents } from '../platform/job-event-stream.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { findExportJob, listExportJobs, toExportJobStatus, type ExportJobRow } from './jobs/export-jobs.ts';

const params = z.object({ id: z.string().min(1) });

async function visibleJob(deps: AppDeps, principal: RequestPrincipal, id: string): Promise<ExportJobRow> {
  const job = await findExportJob(deps.pg, principal.organizationId, id);
  if (job.kind === 'organization_archive' && !can(principal, 'manage_users')) throw forbidden();
  return job;
}

const expired = () => new HttpError(410, 'This export has expired and its file was removed. Export again.');

export async function exportJobRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/export-jobs', {
    config: { access: 'export' },
    schema: {
      tags: ['exports'],
      summary: "Recent export jobs, newest first: an admin's list holds the organisation's, anyone else's the time-series exports "
        + 'they asked for; each with state, progress, expiry and, once its file can be downloaded, download_url',
      querystring: exportJobListQuerySchema,
      response: { 200: z.array(exportJobStatusSchema) },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const admin = can(principal, 'manage_users');
    const wanted = request.query.kind ? [request.query.kind] : EXPORT_JOB_KINDS;
    const jobs = await listExportJobs(deps.pg, principal.organizationId, {
      limit: request.query.limit,
      kinds: admin ? wanted : wanted.filter((kind) => kind !== 'organization_archive'),
      owner: admin ? null : { userId: principal.userId, apiKeyId: principal.apiKeyId },
    });
    return jobs.map(toExportJobStatus);
  });

  app.get('/api/v1/export-jobs/:id', {
    config: { access: 'export' },
    schema: { tags: ['exports'], summary: 'State, progress and file of an export job', params, response: { 200: exportJobStatusSchema } },
  }, async (request) => toExportJobStatus(await visibleJob(deps, principalOf(request), request.params.id)));

  app.get('/api/v1/export-jobs/:id/events', {
    config: { access: 'export' },
    schema: { tags: ['exports'], summary: 'Server-sent events (event: progress, data: the export job status) until the export job finishes', params },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const first = await visibleJob(deps, principal, request.params.id);
    await streamJobEvents(request, reply, deps.jobEvents, {
      id: first.id,
      first,
      load: () => findExportJob(deps.pg, principal.organizationId, first.id),
      status: toExportJobStatus,
      finished: (job) => isExportJobFinished(job.state),
    });
  });

  app.get('/api/v1/export-jobs/:id/download', {
    config: { access: 'export' },
    schema: { tags: ['exports'], summary: 'The file of a completed export job (409 while it runs or when it failed, 410 once expired)', params },
  }, async (request, reply) => {
    const job = await visibleJob(deps, principalOf(request), request.params.id);
    if (job.state === 'expired') throw expired();
    if (job.state === 'failed') throw conflict(job.error ?? 'The export failed.');
    if (job.state !== 'completed' || !job.file_path) throw conflict('The export is not ready yet.');
    const size = await stat(job.file_path).then((info) => info.size, () => null);
    // Removed behind the row's back (the folder was cleaned): the same as expired for the client.
    if (size === null) throw expired();
    return reply.type(job.content_type ?? 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${job.file_name}"`)
      .header('content-length', String(size))
      .header('cache-control', 'no-store')
      .send(createReadStream(job.file_path));
  });
}
