/**
 * Export endpoints: time series (CSV long, CSV wide, XLSX; raw or downsampled) and records (CSV or
 * JSON). Answers stream as the client reads them. Each export is audited once it ended, with who, what
 * and how many rows it carried, and whether it was delivered whole.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordExportQuerySchema, timeSeriesExportQuerySchema, type TimeSeriesExportFormat } from '@bioprocess/shared/exports';
import { parseBucket } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { HttpError } from '../platform/http-error.ts';
import { recordAudit, type AuditInput } from '../audit/record.ts';
import { resolveExportScope } from './scope.ts';
import { countSectionPoints } from './point-source.ts';
import { csvLong, csvWide, type ExportTally } from './csv-formats.ts';
import { xlsxStream } from './xlsx.ts';
import { recordChunks } from './records.ts';
import { organizationArchive } from './archive.ts';

const CONTENT_TYPES: Record<TimeSeriesExportFormat, string> = {
  'csv-long': 'text/csv; charset=utf-8',
  'csv-wide': 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export function tooManyPointsMessage(points: number, limit: number): string {
  return `This export holds ${points.toLocaleString('en-US')} points, more than the ${limit.toLocaleString('en-US')} one download may hold. Narrow the range or the instruments, or downsample.`;
}

/** Passes the chunks on and reports how the source ended: null when whole, else why not. */
async function* reportingEnd(source: AsyncGenerator<string>, onEnd: (error: unknown) => void): AsyncGenerator<string> {
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

function auditAfter(request: FastifyRequest, deps: AppDeps, input: (error: unknown) => AuditInput): (error: unknown) => void {
  return (error) => {
    if (error) request.log.warn({ err: error }, 'an export ended before it was complete');
    recordAudit(deps.pg, request, input(error)).catch((auditError: unknown) => {
      request.log.error({ err: auditError }, 'an export could not be recorded in the audit log');
    });
  };
}

function download(reply: FastifyReply, type: string, filename: string): FastifyReply {
  return reply.type(type).header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'no-store');
}

export async function exportRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/exports/time-series', {
    config: { access: 'export' },
    schema: {
      tags: ['exports'],
      summary: 'Time series of a unit operation, a run or instruments as CSV long, CSV wide or XLSX (streamed), raw or downsampled',
      querystring: timeSeriesExportQuerySchema,
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query;
    const scope = await resolveExportScope(deps.pg, principal.organizationId, query, Date.now());
    const bucketMs = query.bucket === undefined ? null : parseBucket(query.bucket);
    let points = 0;
    for (const section of scope.sections) points += await countSectionPoints(deps.clickhouse, principal.organizationId, section);
    const limit = deps.env.EXPORT_STREAM_MAX_POINTS;
    if (points > limit) throw new HttpError(413, tooManyPointsMessage(points, limit));

    const tally: ExportTally = { rows: 0 };
    const input = { clickhouse: deps.clickhouse, organizationId: principal.organizationId, scope, bucketMs, tally };
    const onEnd = auditAfter(request, deps, (error) => ({
      event_type: 'time_series.exported',
      action: 'export',
      resource_type: scope.resourceType,
      resource_id: scope.resourceId,
      success: error === null,
      changes: {
        after: {
          format: query.format, bucket: query.bucket ?? null, start_time: query.start_time ?? null, end_time: query.end_time ?? null,
          instrument_ids: scope.instruments.map((instrument) => instrument.id),
          unit_operation_ids: scope.sections.flatMap((section) => (section.unitOperation ? [section.unitOperation.id] : [])),
          points, rows: tally.rows, complete: error === null,
        },
      },
    }));
    const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
    const name = `${scope.resourceType.replace('_', '-')}${scope.resourceId === null ? '' : `-${scope.resourceId}`}-${stamp}`;
    reply.header('x-export-points', String(points));
    if (query.format === 'xlsx') {
      const stream = xlsxStream(input, {
        exportedAt: new Date(), user: principal.email ?? principal.name, format: query.format, bucket: query.bucket ?? null,
      }, onEnd);
      return download(reply, CONTENT_TYPES.xlsx, `${name}.xlsx`).send(stream);
    }
    const chunks = query.format === 'csv-long' ? csvLong(input) : csvWide(input, query.elapsed === 'true');
    return download(reply, CONTENT_TYPES[query.format], `${name}-${query.format.slice(4)}.csv`).send(Readable.from(reportingEnd(chunks, onEnd)));
  });

  app.get('/api/v1/exports/organization-archive', {
    config: { access: 'manage_users' },
    schema: { tags: ['exports'], summary: "Admins: the whole organisation as one ZIP (records as CSV, each unit operation's time series as CSV long, manifest.json), streamed" },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const archive = organizationArchive(
      { pg: deps.pg, clickhouse: deps.clickhouse, organizationId: principal.organizationId, exportedBy: principal.email ?? principal.name },
      (manifest, error) => auditAfter(request, deps, () => ({
        event_type: 'organization.exported', action: 'export', resource_type: 'organization', resource_id: principal.organizationId, success: error === null,
        changes: { after: { files: manifest.files.length, rows: manifest.files.reduce((sum, file) => sum + file.rows, 0), complete: error === null } },
      }))(error),
    );
    const day = new Date().toISOString().slice(0, 10);
    return download(reply, 'application/zip', `organization-${principal.organizationId}-${day}.zip`).send(archive);
  });

  app.get('/api/v1/exports/records', {
    config: { access: 'export' },
    schema: { tags: ['exports'], summary: "The organisation's runs, unit operations, facilities, equipment, instruments or comments as CSV or JSON (streamed)", querystring: recordExportQuerySchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const { entity, format } = request.query;
    const tally = { rows: 0 };
    const onEnd = auditAfter(request, deps, (error) => ({
      event_type: 'records.exported', action: 'export', resource_type: entity, success: error === null,
      changes: { after: { entity, format, rows: tally.rows, complete: error === null } },
    }));
    const day = new Date().toISOString().slice(0, 10);
    return download(reply, format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8', `${entity}-${day}.${format}`)
      .send(Readable.from(reportingEnd(recordChunks(deps.pg, principal.organizationId, entity, format, tally), onEnd)));
  });
}
