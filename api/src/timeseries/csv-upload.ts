/**
 * POST /api/v1/unit-operations/{id}/csv-uploads: the server-side CSV upload. Multipart with a
 * `mapping` JSON field sent BEFORE the `file` part, so the mapping is validated before a byte of the
 * file is stored; the file is streamed to UPLOAD_DIR (never held in memory) with CSV_MAX_BYTES
 * enforced while streaming, then a job referencing the spooled file is queued. Rate limited per
 * user (UPLOAD_RATE_LIMIT_PER_MINUTE, spec/02 §5).
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { z } from 'zod';
import { CSV_MESSAGES, checkCsvFile, fileTooLargeMessage } from '@bioprocess/shared/csv/index';
import { INGEST_JOBS, type CsvUploadPayload } from '@bioprocess/shared/queues';
import { csvMappingSchema, ingestJobStatusSchema, TIME_SERIES_MESSAGES, waitQuerySchema, type CsvMapping } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { badRequest, HttpError } from '../platform/http-error.ts';
import { createIngestJob, toJobStatus, WAIT_TIMEOUT_MS, waitForJob } from '../ingest-jobs/jobs.ts';
import { enqueueIngest } from './enqueue.ts';
import { findUnitOperation, ownedInstrumentIds } from './instruments.ts';
import { organizationTimeZone } from '../organizations/settings.ts';

const params = z.object({ id: z.coerce.number().int().positive() });

/** Fixed one-minute windows in Redis, per user (or API key): shared by every api process. */
async function enforceUploadRateLimit(deps: AppDeps, principal: RequestPrincipal): Promise<void> {
  const limit = deps.env.UPLOAD_RATE_LIMIT_PER_MINUTE;
  const who = principal.userId !== null ? `user:${principal.userId}` : `key:${principal.apiKeyId}`;
  const window = Math.floor(Date.now() / 60_000);
  const key = `${deps.env.QUEUE_PREFIX}:upload-rate:${who}:${window}`;
  let count: number;
  try {
    count = await deps.redis.incr(key);
    if (count === 1) await deps.redis.expire(key, 120);
  } catch {
    throw new HttpError(503, 'Upload rate limiting is unavailable; please retry.');
  }
  if (count > limit) throw new HttpError(429, TIME_SERIES_MESSAGES.uploadRateLimited(limit));
}

function parseMapping(text: string): CsvMapping {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest('mapping: must be JSON');
  }
  const result = csvMappingSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    // The spec's own messages (timestamp column, no instrument columns) read best without a path.
    const spec = Object.values(CSV_MESSAGES) as string[];
    throw badRequest(spec.includes(issue.message) || issue.path.length === 0 ? issue.message : `mapping.${issue.path.join('.')}: ${issue.message}`);
  }
  return result.data;
}

async function checkMappingInstruments(deps: AppDeps, organizationId: number, equipmentId: number | null, mapping: CsvMapping): Promise<void> {
  const ids = mapping.columns.map((column) => column.instrument_id);
  const owned = await ownedInstrumentIds(deps.pg, organizationId, ids);
  const missing = mapping.columns.filter((column) => !owned.has(column.instrument_id)).map((column) => column.column);
  if (missing.length > 0) throw badRequest(`Cannot upload CSV: Please create instruments for these columns first: ${missing.join(', ')}`);
  if (equipmentId !== null) {
    const { rows } = await deps.pg.query<{ id: number }>(
      'SELECT id FROM instruments WHERE organization_id = $1 AND equipment_id = $2 AND id = ANY($3::bigint[])',
      [organizationId, equipmentId, ids],
    );
    const onEquipment = new Set(rows.map((row) => row.id));
    const foreign = mapping.columns.find((column) => !onEquipment.has(column.instrument_id));
    if (foreign) throw badRequest(`Instrument ${foreign.instrument_id} (column '${foreign.column}') is not on this unit operation's equipment`);
  }
}

export async function csvUploadRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(multipart, {
    limits: { fileSize: deps.env.CSV_MAX_BYTES, files: 1, fields: 4, fieldSize: 1024 * 1024, parts: 6 },
  });

  app.post('/api/v1/unit-operations/:id/csv-uploads', {
    config: { access: 'create' },
    schema: {
      summary: 'Upload a CSV (multipart: a `mapping` JSON field, then the `file`); answers 202 with the ingest job',
      params,
      querystring: waitQuerySchema,
      response: { 200: ingestJobStatusSchema, 202: ingestJobStatusSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a mapping field and a file');
    const unitOperation = await findUnitOperation(deps.pg, principal.organizationId, request.params.id);
    await enforceUploadRateLimit(deps, principal);

    let mapping: CsvMapping | null = null;
    let spooled: { path: string; name: string; bytes: number } | null = null;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname === 'mapping') mapping = parseMapping(String(part.value));
          continue;
        }
        if (part.fieldname !== 'file' || spooled) {
          part.file.resume();
          continue;
        }
        if (!mapping) {
          part.file.resume();
          throw badRequest(TIME_SERIES_MESSAGES.mappingRequired);
        }
        const fileProblem = checkCsvFile({ name: part.filename ?? '', size: 1, type: part.mimetype });
        if (fileProblem) {
          part.file.resume();
          throw badRequest(fileProblem);
        }
        await checkMappingInstruments(deps, principal.organizationId, unitOperation.equipmentId, mapping);
        await mkdir(deps.env.UPLOAD_DIR, { recursive: true });
        const target = path.resolve(deps.env.UPLOAD_DIR, `${randomUUID()}.csv`);
        spooled = { path: target, name: part.filename ?? 'upload.csv', bytes: 0 };
        await pipeline(part.file, createWriteStream(target, { flags: 'wx' }));
        spooled.bytes = (await stat(target)).size;
      }
    } catch (error) {
      if (spooled) await rm(spooled.path, { force: true });
      if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new HttpError(413, fileTooLargeMessage(deps.env.CSV_MAX_BYTES));
      throw error;
    }
    if (!mapping) throw badRequest('mapping: required (a JSON multipart field before the file)');
    if (!spooled) throw badRequest(TIME_SERIES_MESSAGES.fileRequired);
    if (spooled.bytes === 0) {
      await rm(spooled.path, { force: true });
      throw badRequest(CSV_MESSAGES.fileEmpty);
    }

    const { job } = await createIngestJob(deps.pg, principal, {
      kind: 'csv',
      request: {
        unit_operation_id: unitOperation.id, mapping, file_name: spooled.name, bytes: spooled.bytes,
        start_ms: unitOperation.startMs, end_ms: unitOperation.endMs,
        // Settled now: a later change of the organisation's zone does not change a queued upload.
        time_zone: mapping.time_zone ?? await organizationTimeZone(deps.pg, principal.organizationId),
        time_zone_source: mapping.time_zone ? 'mapping' : 'organization',
      },
      progress: { bytes_total: spooled.bytes },
    });
    const payload: CsvUploadPayload = {
      job_id: job.id, organization_id: job.organization_id, version_seq: job.version_seq,
      unit_operation_id: unitOperation.id, file_path: spooled.path, original_name: spooled.name,
    };
    await enqueueIngest(deps, job.id, [{ name: INGEST_JOBS.csv, jobId: `${job.id}-csv`, data: payload }]);
    reply.header('location', `/api/v1/ingest-jobs/${job.id}`);
    reply.header('x-ingest-job-id', job.id);
    if (request.query.wait === 'true') {
      const controller = new AbortController();
      reply.raw.once('close', () => controller.abort());
      const finished = await waitForJob(deps.pg, deps.jobEvents, principal.organizationId, job.id, WAIT_TIMEOUT_MS, controller.signal);
      if (finished.state === 'failed') throw new HttpError(422, finished.error ?? 'CSV upload failed');
      return reply.status(finished.state === 'completed' ? 200 : 202).send(toJobStatus(finished));
    }
    return reply.status(202).send(toJobStatus(job));
  });
}
