/**
 * Time-series endpoints: bulk writes, downsampled reads, range
 * deletions and a unit operation's series. Writes and deletions are queued (202 + ingest job);
 * `?wait=true` answers once the data is queryable.
 */
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  BULK_MAX_BODY_BYTES,
  READ_MAX_INSTRUMENTS,
  READ_MAX_POINTS,
  TIME_SERIES_MESSAGES,
  TIME_SERIES_DEFAULT_LIMIT,
  bulkBodySchema,
  deletionBodySchema,
  parseBucket,
  parseTimestampInput,
  readingListSchema,
  timeSeriesQuerySchema,
  unitOperationSeriesQuerySchema,
  waitQuerySchema,
} from '@bioprocess/shared/timeseries';
import { bulkRequestSchema, deletionRequestSchema } from '@bioprocess/shared/ingest/requests';
import { POINT_ROWS_FORMAT } from '@bioprocess/shared/point-rows';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { badRequest, notFound } from '../platform/http-error.ts';
import { createIngestJob, WAIT_TIMEOUT_MS, waitForJob, type IngestJobRow } from '../ingest-jobs/jobs.ts';
import { createVersionDraws } from '../ingest-jobs/version-draws.ts';
import type { FinishWait } from '../ingest-jobs/finish-events.ts';
import { BATCHED_POST_MAX_POINTS, createBulkJobBatches, type PostOnItsWay } from './bulk-batches.ts';
import { acceptLargePost } from './large-posts.ts';
import { firstForeignIndex } from './bulk.ts';
import { createBulkPool, PARSED_IN_PLACE_MAX_BYTES } from './bulk-pool.ts';
import { admitBulkPostsBySize, keepAdmittedBytes } from './bulk-admission.ts';
import { bulkBytesPerOrganization } from '@bioprocess/shared/server/config';
import { enqueueIngest } from './enqueue.ts';
import { createOwnershipLookups, findUnitOperation, instrumentsOfEquipment, organizationInstrumentIds, ownedInstrumentIds } from './instruments.ts';
import { streamSeries, type SeriesRequest } from './read-series.ts';
import { requireWithinReadCaps } from './read-caps.ts';
import { streamBudgetOf } from '../platform/stream-budget.ts';
import { prefersMinimalReturn } from '../platform/prefer-header.ts';
import { csvUploadRoutes } from './csv-upload.ts';
import { clientLeftSignal } from '../platform/client-left.ts';
import { refuseLockedInstrumentRange } from '../runs/review-lock.ts';


const idempotencyHeaders = z.object({
  'idempotency-key': z.string().min(1).max(200).optional().describe('A retried request with the same key returns the original job'),
});
const bulkHeaders = idempotencyHeaders.extend({
  prefer: z.string().max(1000).optional().describe('`return=minimal` (RFC 7240): an empty answer instead of the accepted readings, for feeds that do not read them'),
});
const unitOperationParams = z.object({ id: z.coerce.number().int().positive() });

/**
 * The bulk body is documented by the zod schema but arrives as bytes, parsed and checked on a thread
 * by prepareBulkPost (a scanner that is many times faster on a million points and names the first bad
 * index as the schema's rules say); the other parts of the request go through zod as everywhere else.
 */
const bulkValidatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  if (route.httpPart === 'body') return (body: unknown) => ({ value: body });
  return (validatorCompiler as FastifySchemaCompiler<unknown>)(route);
};

function jobHeaders(reply: FastifyReply, job: IngestJobRow): void {
  reply.header('location', `/api/v1/ingest-jobs/${job.id}`);
  reply.header('x-ingest-job-id', job.id);
}

/** 200 once the job completed, 202 while it runs (timeout), 422 with its error when it failed. */
async function settle(deps: AppDeps, job: IngestJobRow, wait: boolean, reply: FastifyReply, registered?: FinishWait): Promise<number> {
  if (!wait) return 202;
  const finished = await waitForJob(deps.pg, deps.jobEvents, job.organization_id, job.id, WAIT_TIMEOUT_MS, {
    signal: clientLeftSignal(reply), registered: registered && { wait: registered, known: job },
  });
  if (finished.state === 'completed') return 200;
  if (finished.state === 'failed') throw Object.assign(new Error(finished.error ?? 'Ingest job failed'), { statusCode: 422 });
  return 202;
}

export async function timeSeriesRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(csvUploadRoutes, deps);
  const bulkPool = createBulkPool(deps.env.BULK_PARSE_THREADS);
  app.addHook('onClose', async () => bulkPool.close());
  const versionDraws = createVersionDraws(deps.pg);
  const bulkBatches = createBulkJobBatches(deps);
  const ownershipLookups = createOwnershipLookups(deps.pg, deps.accessCaches.instrumentOwners);
  /**
   * Reads, checks and records a bulk post (a 202 means durable from here); answers its job and, unless
   * the client asked for a minimal answer, the accepted readings to send back.
   */
  const recordBulkPost = async (
    body: Uint8Array,
    principal: RequestPrincipal,
    options: { minimal: boolean; wait: boolean; idempotencyKey: string | undefined },
    onItsWay: PostOnItsWay,
  ): Promise<{ job: IngestJobRow; registered: FinishWait | undefined; readings: Uint8Array | null }> => {
    try {
      return await readAndRecordBulkPost(body, principal, options, onItsWay);
    } finally {
      onItsWay.leave();
    }
  };
  const readAndRecordBulkPost = async (
    body: Uint8Array,
    principal: RequestPrincipal,
    options: { minimal: boolean; wait: boolean; idempotencyKey: string | undefined },
    onItsWay: PostOnItsWay,
  ): Promise<{ job: IngestJobRow; registered: FinishWait | undefined; readings: Uint8Array | null }> => {
    // Requests are ordered by their version: one sent after another was accepted always gets a higher
    // one. A small post (a feed's) is read first and gets its version from the statement that records
    // it, one round trip fewer per post; its rows are stamped with it afterwards. A larger one draws
    // its version first, so that its rows are final as written (it may be spooled or split). A body
    // this small holds a few hundred points at most (each takes thirty bytes or more): always batched.
    const versionFromJob = body.length < PARSED_IN_PLACE_MAX_BYTES;
    const versionSeq = versionFromJob ? 0 : await versionDraws.next();
    const prepared = await bulkPool.prepare({ body, organizationId: principal.organizationId, versionSeq, echo: !options.minimal });
    if (!prepared.ok) throw badRequest(prepared.error);
    const batched = prepared.chunks.length === 1 && prepared.points <= BATCHED_POST_MAX_POINTS;
    if (versionFromJob && !batched) throw new Error('A bulk post read before its version was drawn is too large to be batched');
    const owned = await ownershipLookups.owned(principal.organizationId, prepared.instruments.map(([id]) => id));
    const foreign = firstForeignIndex(prepared.instruments, owned);
    if (foreign >= 0) throw badRequest(TIME_SERIES_MESSAGES.instrumentNotFound(foreign));

    const data = prepared.chunks.map((rows, chunkIndex) => ({ part: chunkIndex, bytes: rows }));
    const bulkJob = {
      kind: 'bulk' as const,
      idempotencyKey: options.idempotencyKey,
      versionSeq: versionFromJob ? undefined : versionSeq,
      chunkCount: prepared.chunks.length,
      request: bulkRequestSchema.parse({
        instrument_ids: prepared.instruments.map(([id]) => id), start_ms: prepared.startMs, end_ms: prepared.endMs,
        points: prepared.points, rows_format: POINT_ROWS_FORMAT,
        ...(versionFromJob ? { versions_from_job: true } : {}),
      }),
      // Stored before the answer (with a small post's job row, or spooled for a large one): a 202 means durable.
      data,
    };
    // Small posts (feeds) are recorded and queued together with those arriving meanwhile.
    if (!batched) onItsWay.leave();
    const { job, registered } = batched
      ? await bulkBatches.accept(principal, { ...bulkJob, chunkCount: 1 }, options.wait, onItsWay)
      : { job: (await acceptLargePost(deps, principal, bulkJob)).job, registered: undefined };
    return { job, registered, readings: options.minimal ? null : prepared.readings };
  };
  // Its own scope: only this route takes its JSON body as bytes.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BULK_MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
    admitBulkPostsBySize(scope, {
      bytes: deps.env.BULK_BYTES_IN_FLIGHT,
      perOwner: bulkBytesPerOrganization(deps.env),
      maxBodyBytes: BULK_MAX_BODY_BYTES,
    }, (request) => String(principalOf(request).organizationId));
    // Small posts are committed together with those on their way: from their admission, so that a
    // commit waits for the posts whose bodies are still arriving, not only for those being parsed.
    const postsOnTheirWay = new WeakMap<FastifyRequest, PostOnItsWay>();
    scope.addHook('onRequest', async (request, reply) => {
      const onItsWay = bulkBatches.setOut();
      postsOnTheirWay.set(request, onItsWay);
      reply.raw.once('close', () => onItsWay.leave());
    });
    scope.post('/api/v1/time-series-data/bulk', {
      config: { access: 'create' },
      bodyLimit: BULK_MAX_BODY_BYTES,
      validatorCompiler: bulkValidatorCompiler,
      schema: {
        summary: 'Write points (queued); answers the accepted readings with the ingest job in Location',
        body: bulkBodySchema,
        querystring: waitQuerySchema,
        headers: bulkHeaders,
      },
    }, async (request, reply) => {
      const principal = principalOf(request);
      const minimal = prefersMinimalReturn(request.headers.prefer);
      const wait = request.query.wait === 'true';
      const body = request.body as unknown;
      if (!(body instanceof Uint8Array)) throw badRequest('data: must be a list of points');
      // The body is not needed once read; the post's other bytes die with recordBulkPost's frame.
      (request as { body: unknown }).body = undefined;
      const onItsWay = postsOnTheirWay.get(request)!;
      const { job, registered, readings } = await recordBulkPost(body, principal, { minimal, wait, idempotencyKey: request.headers['idempotency-key'] }, onItsWay);
      // Recorded: the post now holds its answer alone (nothing with return=minimal) while it waits.
      keepAdmittedBytes(request, readings?.length ?? 0);
      jobHeaders(reply, job);
      const status = await settle(deps, job, wait, reply, registered);
      if (!readings) return reply.status(status).header('preference-applied', 'return=minimal').send();
      return reply.status(status).type('application/json; charset=utf-8').send(Buffer.from(readings.buffer, readings.byteOffset, readings.length));
    });
  });

  const streamBudget = streamBudgetOf(deps);
  /** Streams the readings as JSON: a slot of the organisation's stream budget while it streams (waited for when none is free). */
  const sendReadings = async (reply: FastifyReply, read: SeriesRequest) => {
    const slot = await streamBudget.admitWhenFree(read.organizationId, reply);
    return reply.type('application/json; charset=utf-8').send(slot.stream(streamSeries(deps.clickhouse, read)));
  };

  app.get('/api/v1/time-series-data', {
    config: { access: 'read', readsRollups: true },
    schema: {
      summary: `Readings, deduplicated and downsampled in the database (default limit ${TIME_SERIES_DEFAULT_LIMIT} per instrument); `
        + `at most ${READ_MAX_INSTRUMENTS} instruments and ${READ_MAX_POINTS} readings (instruments x limit) per read, else 400; streamed`,
      querystring: timeSeriesQuerySchema,
      response: { 200: readingListSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const query = request.query;
    let instrumentIds: number[];
    if (query.equipment_id !== undefined) {
      instrumentIds = await instrumentsOfEquipment(deps.pg, principal.organizationId, query.equipment_id);
      if (query.instrument_id !== undefined) instrumentIds = instrumentIds.filter((id) => id === query.instrument_id);
    } else if (query.instrument_id !== undefined) {
      const owned = await ownedInstrumentIds(deps.pg, principal.organizationId, [query.instrument_id]);
      if (!owned.has(query.instrument_id)) throw notFound('Instrument not found');
      instrumentIds = [query.instrument_id];
    } else {
      instrumentIds = await organizationInstrumentIds(deps.pg, principal.organizationId);
    }
    const limit = query.limit ?? TIME_SERIES_DEFAULT_LIMIT;
    requireWithinReadCaps({ instruments: instrumentIds.length, limit }, 'Name instruments with instrument_id.');
    const startMs = query.start_time === undefined ? null : parseTimestampInput(query.start_time);
    const endMs = query.end_time === undefined ? null : parseTimestampInput(query.end_time);
    if (startMs !== null && endMs !== null && endMs < startMs) throw badRequest('End time must be after start time.');
    return sendReadings(reply, {
      organizationId: principal.organizationId,
      instrumentIds,
      startMs,
      endMs,
      bucketMs: query.bucket === undefined ? null : parseBucket(query.bucket),
      limit,
    });
  });

  app.get('/api/v1/unit-operations/:id/time-series-data', {
    config: { access: 'read', readsRollups: true },
    schema: {
      summary: "Readings of every instrument on the unit operation's equipment (or the one named) within its start and end (now when none); "
        + `none without a start; at most ${READ_MAX_INSTRUMENTS} instruments and ${READ_MAX_POINTS} readings (instruments x limit) per read, else 400; streamed`,
      params: unitOperationParams,
      querystring: unitOperationSeriesQuerySchema,
      response: { 200: readingListSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const unitOperation = await findUnitOperation(deps.pg, principal.organizationId, request.params.id);
    // Without a start it has no window: its equipment's readings belong to other unit operations, if any.
    if (unitOperation.equipmentId === null || unitOperation.startMs === null) return [];
    let instrumentIds = await instrumentsOfEquipment(deps.pg, principal.organizationId, unitOperation.equipmentId);
    const wanted = request.query.instrument_id;
    if (wanted !== undefined) instrumentIds = instrumentIds.filter((id) => id === wanted);
    const limit = request.query.limit ?? TIME_SERIES_DEFAULT_LIMIT;
    requireWithinReadCaps({ instruments: instrumentIds.length, limit }, 'Name one of them with instrument_id.');
    return sendReadings(reply, {
      organizationId: principal.organizationId,
      instrumentIds,
      startMs: unitOperation.startMs,
      endMs: unitOperation.endMs ?? Date.now(),
      bucketMs: request.query.bucket === undefined ? null : parseBucket(request.query.bucket),
      limit,
    });
  });

  app.delete('/api/v1/time-series-data', {
    config: { access: 'edit' },
    schema: {
      summary: 'Delete the readings of instruments in a time range (queued; 202 with the ingest job)',
      body: deletionBodySchema,
      querystring: waitQuerySchema,
      headers: idempotencyHeaders,
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const instrumentIds = [...new Set(request.body.instrument_ids)];
    const owned = await ownedInstrumentIds(deps.pg, principal.organizationId, instrumentIds);
    const foreign = request.body.instrument_ids.findIndex((id) => !owned.has(id));
    if (foreign >= 0) throw badRequest(`instrument_ids.${foreign}: instrument not found`);
    const startMs = parseTimestampInput(request.body.start_time);
    const endMs = parseTimestampInput(request.body.end_time);
    await refuseLockedInstrumentRange(deps.pg, principal.organizationId, instrumentIds, startMs, endMs);
    const job = await queueRangeDeletion(deps, principal, {
      instrumentIds,
      startMs,
      endMs,
      idempotencyKey: request.headers['idempotency-key'],
    });
    jobHeaders(reply, job);
    const status = await settle(deps, job, request.query.wait === 'true', reply);
    return reply.status(status).send({ job_id: job.id, state: status === 200 ? 'completed' : job.state });
  });
}

/**
 * Records and queues a range deletion (also used when a unit operation is deleted). The deletion is
 * recorded with its version in the same transaction as the job, so writes accepted earlier but
 * processed later still honour it.
 */
export async function queueRangeDeletion(
  deps: AppDeps,
  principal: Parameters<typeof createIngestJob>[1],
  deletion: { instrumentIds: number[]; startMs: number; endMs: number; idempotencyKey?: string; unitOperationId?: number },
): Promise<IngestJobRow> {
  const { job, created } = await createIngestJob(deps.pg, principal, {
    kind: 'deletion',
    idempotencyKey: deletion.idempotencyKey,
    request: deletionRequestSchema.parse({
      instrument_ids: deletion.instrumentIds, start_ms: deletion.startMs, end_ms: deletion.endMs, unit_operation_id: deletion.unitOperationId,
    }),
    deletion,
  });
  if (created) await enqueueIngest(deps, job);
  return job;
}
