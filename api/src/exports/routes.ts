/**
 * Export endpoints: time series (CSV long, CSV wide, XLSX; raw or downsampled), records (CSV or JSON)
 * and the organisation archive. Answers stream as the client reads them; a time-series export above
 * EXPORT_STREAM_MAX_POINTS and the archive become export jobs (jobs/), written by the export-worker and
 * downloaded once ready (job-routes.ts); an organisation has at most EXPORT_MAX_ACTIVE_JOBS of them queued or
 * running (more answer 429). Each export is audited once it ended, with who, what and how
 * many rows it carried, and whether it was delivered whole (a job's event is written when it finishes).
 * A streamed answer holds a slot of its organisation's stream budget (platform/stream-budget.ts) while
 * it streams: past the budget the next one answers 429, and one its client stops reading is ended.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  EXPORT_MAX_INSTRUMENTS, EXPORT_MESSAGES, exportJobStatusSchema, recordExportQuerySchema, timeSeriesExportQuerySchema, type ExportJobStatus,
} from '@bioprocess/shared/exports';
import { parseBucket } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { badRequest } from '../platform/http-error.ts';
import { streamBudgetOf } from '../platform/stream-budget.ts';
import { recordAudit, type AuditInput } from '../audit/record.ts';
import { resolveExportScope } from './scope.ts';
import { countSectionPoints } from './point-source.ts';
import { csvLong, csvWide, type ExportTally } from './csv-formats.ts';
import { xlsxStream } from './xlsx.ts';
import { loadScopeSamples } from './samples.ts';
import { recordChunks } from './records.ts';
import { CONTENT_TYPES, timeSeriesFileName } from './file-names.ts';
import { createExportJob, deliverExportJob, toExportJobStatus, type ExportJobRow } from './jobs/export-jobs.ts';
import { wireQuery } from './jobs/run-export.ts';

/** Queues the job's delivery; should Redis refuse, the export-worker's sweep delivers it from the row later. */
async function deliver(request: FastifyRequest, deps: AppDeps, job: ExportJobRow): Promise<void> {
  await deliverExportJob(deps.queues.export, job).catch((error: unknown) => {
    request.log.warn({ err: error, jobId: job.id }, 'export job not queued yet; the sweep will deliver it');
  });
}

function accepted(reply: FastifyReply, job: ExportJobRow): ExportJobStatus {
  reply.code(202).header('location', `/api/v1/export-jobs/${job.id}`);
  return toExportJobStatus(job);
}

/** Passes the chunks on and reports how the source ended: null when whole, else why not. */
export async function* reportingEnd<Chunk>(source: AsyncGenerator<Chunk>, onEnd: (error: unknown) => void): AsyncGenerator<Chunk> {
  let whole = false;
  let failure: unknown = new Error('the client went away');
  try {
    yield* source;
    whole = true;
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    onEnd(whole ? null : failure);
  }
}

export function auditAfter(request: FastifyRequest, deps: AppDeps, input: (error: unknown) => AuditInput): (error: unknown) => void {
  return (error) => {
    if (error) request.log.warn({ err: error }, 'an export ended before it was complete');
    recordAudit(deps.pg, request, input(error)).catch((auditError: unknown) => {
      request.log.error({ err: auditError }, 'an export could not be recorded in the audit log');
    });
  };
}

export function download(reply: FastifyReply, type: string, filename: string): FastifyReply {
  return reply.type(type).header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'no-store');
}

export async function exportRoutes(app: App, deps: AppDeps): Promise<void> {
  const streamBudget = streamBudgetOf(deps);
  app.get('/api/v1/exports/time-series', {
    config: { access: 'export', readsRollups: true },
    schema: {
      tags: ['exports'],
      summary: 'Time series of a unit operation, a run or instruments as CSV long, CSV wide or XLSX, raw or downsampled: streamed up to '
        + 'EXPORT_STREAM_MAX_POINTS points, else 202 with an export job (progress at /api/v1/export-jobs/{id}/events, the file at its download_url once ready)',
      querystring: timeSeriesExportQuerySchema,
      response: { 202: exportJobStatusSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query;
    const nowMs = Date.now();
    const scope = await resolveExportScope(deps.pg, principal.organizationId, query, nowMs);
    if (scope.instruments.length > EXPORT_MAX_INSTRUMENTS) throw badRequest(EXPORT_MESSAGES.tooManyInstruments(scope.instruments.length));
    const bucketMs = query.bucket === undefined ? null : parseBucket(query.bucket);
    let points = 0;
    for (const section of scope.sections) points += await countSectionPoints(deps.clickhouse, principal.organizationId, section);
    const audit = {
      format: query.format, bucket: query.bucket ?? null, start_time: query.start_time ?? null, end_time: query.end_time ?? null,
      instrument_ids: scope.instruments.map((instrument) => instrument.id),
      unit_operation_ids: scope.sections.flatMap((section) => (section.unitOperation ? [section.unitOperation.id] : [])),
      points,
    };
    if (points > deps.env.EXPORT_STREAM_MAX_POINTS) {
      // Too large for one answer: the export-worker writes the file, the client follows its progress.
      const job = await createExportJob(deps.pg, principal, {
        kind: 'time_series',
        request: {
          query: wireQuery(query), now_ms: nowMs, points, ip: request.ip,
          audit: { resource_type: scope.resourceType, resource_id: scope.resourceId, after: audit },
        },
        progress: { points_total: points },
      }, deps.env.EXPORT_MAX_ACTIVE_JOBS);
      await deliver(request, deps, job);
      return accepted(reply, job);
    }

    const tally: ExportTally = { rows: 0, points: 0 };
    const input = { clickhouse: deps.clickhouse, organizationId: principal.organizationId, scope, bucketMs, tally };
    const onEnd = auditAfter(request, deps, (error) => ({
      event_type: 'time_series.exported',
      action: 'export',
      resource_type: scope.resourceType,
      resource_id: scope.resourceId,
      success: error === null,
      changes: { after: { ...audit, rows: tally.rows, complete: error === null } },
    }));
    const fileName = timeSeriesFileName(scope, query.format, new Date(nowMs));
    const samples = query.format === 'xlsx' ? await loadScopeSamples(deps.pg, principal.organizationId, scope) : undefined;
    // Taken before the first row is read: past the organisation's budget nothing starts.
    const slot = streamBudget.admit(principal.organizationId, reply);
    reply.header('x-export-points', String(points));
    if (query.format === 'xlsx') {
      const stream = xlsxStream(input, {
        exportedAt: new Date(), user: principal.email ?? principal.name, format: query.format, bucket: query.bucket ?? null,
        samples,
      }, onEnd);
      return download(reply, CONTENT_TYPES.xlsx, fileName).send(slot.stream(stream));
    }
    const chunks = query.format === 'csv-long' ? csvLong(input) : csvWide(input, query.elapsed === 'true');
    return download(reply, CONTENT_TYPES[query.format], fileName).send(slot.stream(reportingEnd(chunks, onEnd)));
  });

  app.post('/api/v1/exports/organization-archive', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['exports'],
      summary: "Admins: the whole organisation as one ZIP (records as CSV, each unit operation's time series as CSV long, manifest.json), "
        + 'built as an export job: 202 with the job, progress at /api/v1/export-jobs/{id}/events, the file at its download_url once ready',
      response: { 202: exportJobStatusSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const job = await createExportJob(deps.pg, principal, { kind: 'organization_archive', request: { ip: request.ip } }, deps.env.EXPORT_MAX_ACTIVE_JOBS);
    await deliver(request, deps, job);
    return accepted(reply, job);
  });

  app.get('/api/v1/exports/records', {
    config: { access: 'export' },
    schema: { tags: ['exports'], summary: "The organisation's runs, unit operations, facilities, equipment, instruments or comments as CSV or JSON (streamed)", querystring: recordExportQuerySchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const { entity, format } = request.query;
    const slot = streamBudget.admit(principal.organizationId, reply);
    const tally = { rows: 0, points: 0 };
    const onEnd = auditAfter(request, deps, (error) => ({
      event_type: 'records.exported', action: 'export', resource_type: entity, success: error === null,
      changes: { after: { entity, format, rows: tally.rows, complete: error === null } },
    }));
    const day = new Date().toISOString().slice(0, 10);
    return download(reply, format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8', `${entity}-${day}.${format}`)
      .send(slot.stream(reportingEnd(recordChunks(deps.pg, principal.organizationId, entity, format, tally), onEnd)));
  });
}
