/**
 * The server-side CSV upload, in two forms: into an existing unit operation
 * (POST /api/v1/unit-operations/{id}/csv-uploads), and a unit operation created together with its
 * first upload (POST /api/v1/unit-operations/csv-uploads), which exists only if that upload succeeds.
 * Multipart parts may come in any order: fields are checked as they arrive, the file is streamed to
 * UPLOAD_DIR (never held in memory) with CSV_MAX_BYTES enforced while streaming and removed again when
 * the request is refused. Then a job referencing the spooled file is queued. Limited per
 * organisation: uploads per minute, uploads in flight and spooled bytes in flight (upload-limits.ts).
 */
import {
  csvRequestSchema, DEFAULT_DUPLICATE_POLICY, duplicatePolicySchema, missingValuesSchema, type CsvRequest, type DuplicatePolicy,
} from '@bioprocess/shared/ingest/requests';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { syncToDisk } from '@bioprocess/shared/server/sync-to-disk';
import path from 'node:path';
import { Duplex, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { unitOperationCreateSchema, unitOperationSchema, type UnitOperationCreate } from '@bioprocess/shared/entities';
import { overlapMessage } from '@bioprocess/shared/unit-operation-windows';
import { findOverlappingUnitOperation } from '@bioprocess/shared/server/unit-operations-repository';
import { withTransaction, type Pool, type PoolClient } from '@bioprocess/shared/server/postgres';
import { CSV_MESSAGES, checkCsvFile, fileTooLargeMessage, isSpreadsheetName } from '@bioprocess/shared/csv/index';
import { csvMappingSchema, ingestJobStatusSchema, TIME_SERIES_MESSAGES, waitQuerySchema, type CsvMapping } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { badRequest, conflict, HttpError } from '../platform/http-error.ts';
import { clientLeftSignal } from '../platform/client-left.ts';
import { recordAudit } from '../audit/record.ts';
import { createIngestJob, insertIngestJob, toJobStatus, WAIT_TIMEOUT_MS, waitForJob, type IngestJobRow } from '../ingest-jobs/jobs.ts';
import { insertUnitOperation } from '../unit-operations/windows.ts';
import type { UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { toUnitOperation } from '../unit-operations/repository.ts';
import { listInstrumentIdsOnEquipment, listInstrumentsById } from '@bioprocess/shared/server/instruments-repository';
import { enqueueIngest } from './enqueue.ts';
import { admitUpload, type UploadAdmission } from './upload-limits.ts';
import { checkSpooledHeader, lineLengthGuard } from './csv-line-guard.ts';
import { findUnitOperation, ownedInstrumentIds, unitOperationWindow, type UnitOperationWindow } from './instruments.ts';
import { organizationTimeZone } from '../organizations/settings.ts';
import { refuseLockedRun, refuseLockedUnitOperation } from '../runs/review-lock.ts';
import { cutSpoolToTable, refuseBinarySpool } from './csv-spool-reading.ts';
import { csvPreviewRoutes } from './csv-previews.ts';
import { spreadsheetConversionRoutes } from './spreadsheet-conversions.ts';
import { spreadsheetCsvLines, SPREADSHEET_SHEET_FIELD, spreadsheetSheetSchema } from './spreadsheet-csv.ts';

const params = z.object({ id: z.coerce.number().int().positive() });
const unitOperationWithUploadSchema = z.object({ unit_operation: unitOperationSchema, job: ingestJobStatusSchema });

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
    // The fixed CSV messages (timestamp column, no instrument columns) read best without a path.
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
    const onEquipment = new Set(await listInstrumentIdsOnEquipment(deps.pg, organizationId, equipmentId, ids));
    const foreign = mapping.columns.find((column) => !onEquipment.has(column.instrument_id));
    if (foreign) throw badRequest(`Instrument ${foreign.instrument_id} (column '${foreign.column}') is not on this unit operation's equipment`);
  }
  await checkConvertedUnits(deps, organizationId, mapping);
}

/**
 * A column converted to another unit feeds an instrument of that unit: values converted to L/h in an
 * instrument kept in mL/h would be read a thousand times too small.
 */
async function checkConvertedUnits(deps: AppDeps, organizationId: number, mapping: CsvMapping): Promise<void> {
  const converted = mapping.columns.filter((column) => column.convert_unit !== undefined);
  if (converted.length === 0) return;
  const units = new Map((await listInstrumentsById(deps.pg, organizationId, converted.map((column) => column.instrument_id))).map((row) => [row.id, row.unit]));
  for (const column of converted) {
    const unit = units.get(column.instrument_id) ?? null;
    const target = column.convert_unit!.to;
    if (unit !== target) {
      throw badRequest(`Column '${column.column}' is converted to '${target}', but instrument ${column.instrument_id} is kept in ${unit === null ? 'no unit' : `'${unit}'`}: convert to the instrument's unit or map an instrument in '${target}'.`);
    }
  }
}

interface SpooledFile { path: string; name: string; bytes: number }

/**
 * Reads every part in arrival order: fields go to `onField` (which throws on a bad value), the one
 * `file` part is spooled. An Excel workbook is spooled as the CSV text of its sheet (a `sheet` field
 * before the file, else the first), so everything after reads it as a text export. On any failure
 * the spooled file is removed before the error propagates.
 */
async function receiveParts(deps: AppDeps, request: FastifyRequest, admission: UploadAdmission, onField: (name: string, value: string) => void): Promise<SpooledFile | null> {
  let spooled: SpooledFile | null = null;
  let sheet: string | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field' && part.fieldname === SPREADSHEET_SHEET_FIELD) {
        const parsed = spreadsheetSheetSchema.safeParse(String(part.value));
        if (!parsed.success) throw badRequest(`${SPREADSHEET_SHEET_FIELD}: ${parsed.error.issues[0]!.message}`);
        sheet = parsed.data;
        continue;
      }
      if (part.type === 'field') {
        onField(part.fieldname, String(part.value));
        continue;
      }
      if (part.fieldname !== 'file' || spooled) {
        part.file.resume();
        continue;
      }
      const fileProblem = checkCsvFile({ name: part.filename ?? '', size: 1, type: part.mimetype });
      if (fileProblem) {
        part.file.resume();
        throw badRequest(fileProblem);
      }
      await mkdir(deps.env.UPLOAD_DIR, { recursive: true });
      const target = path.resolve(deps.env.UPLOAD_DIR, `${randomUUID()}.csv`);
      spooled = { path: target, name: part.filename ?? 'upload.csv', bytes: 0 };
      const guard = lineLengthGuard(deps.env.CSV_MAX_LINE_BYTES);
      const output = createWriteStream(target, { flags: 'wx' });
      if (isSpreadsheetName(spooled.name)) {
        const chosenSheet = sheet;
        // A Duplex rather than a bare generator stage: with a generator stage, a workbook refused while
        // the meter's flush was still reporting threw its 400 a second time, uncaught, killing the process.
        const sheetAsCsv = Duplex.from((workbook: AsyncIterable<Buffer>) => spreadsheetCsvLines(Readable.from(workbook), chosenSheet));
        await pipeline(part.file, admission.meter(), sheetAsCsv, guard, output);
      } else {
        await pipeline(part.file, admission.meter(), guard, output);
      }
      spooled.bytes = (await stat(target)).size;
      await syncToDisk(target, path.dirname(target));
    }
  } catch (error) {
    if (spooled) await rm(spooled.path, { force: true });
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new HttpError(413, fileTooLargeMessage(deps.env.CSV_MAX_BYTES));
    throw error;
  }
  return spooled;
}

/** The checks every upload passes once all parts are in; the file is removed when one fails. */
async function requireUpload(deps: AppDeps, mapping: CsvMapping | null, spooled: SpooledFile | null): Promise<{ mapping: CsvMapping; spooled: SpooledFile }> {
  if (!mapping) {
    if (spooled) await rm(spooled.path, { force: true });
    throw badRequest(TIME_SERIES_MESSAGES.mappingRequired);
  }
  if (!spooled) throw badRequest(TIME_SERIES_MESSAGES.fileRequired);
  if (spooled.bytes === 0) {
    await rm(spooled.path, { force: true });
    throw badRequest(CSV_MESSAGES.fileEmpty);
  }
  try {
    await refuseBinarySpool(spooled.path);
    spooled.bytes = await cutSpoolToTable(spooled.path, mapping.reading, spooled.bytes);
    await checkSpooledHeader(spooled.path, deps.env.CSV_MAX_COLUMNS);
  } catch (error) {
    await rm(spooled.path, { force: true });
    throw error;
  }
  return { mapping, spooled };
}

function parseUnitOperation(text: string): UnitOperationCreate {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest('unit_operation: must be JSON');
  }
  const result = unitOperationCreateSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw badRequest(issue.path.length === 0 ? issue.message : `unit_operation.${issue.path.join('.')}: ${issue.message}`);
  }
  return result.data;
}

/**
 * How the upload treats rows sharing a stored key and which cells mean "no value": the multipart
 * fields `duplicates` (refuse, keep-first, keep-last; default refuse) and `missing_values` (a JSON
 * array of texts or numbers, such as ["-9999"]).
 */
interface ReadingChoices {
  duplicates: DuplicatePolicy;
  missingValues?: string[];
}

function readingChoices(): ReadingChoices & { take: (name: string, value: string) => void } {
  const choices: ReadingChoices & { take: (name: string, value: string) => void } = {
    duplicates: DEFAULT_DUPLICATE_POLICY,
    take(name, value) {
      if (name === 'duplicates') {
        const parsed = duplicatePolicySchema.safeParse(value.trim());
        if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
        choices.duplicates = parsed.data;
      } else if (name === 'missing_values') {
        let json: unknown;
        try {
          json = JSON.parse(value);
        } catch {
          throw badRequest('missing_values: must be a JSON array of strings');
        }
        const parsed = missingValuesSchema.safeParse(Array.isArray(json) ? json.map((entry) => (typeof entry === 'number' ? String(entry) : entry)) : json);
        if (!parsed.success) throw badRequest(`missing_values: ${parsed.error.issues[0]!.message}`);
        choices.missingValues = parsed.data;
      }
    },
  };
  return choices;
}

async function csvJobRequest(
  db: Pool | PoolClient, organizationId: number, unitOperation: UnitOperationWindow, mapping: CsvMapping, spooled: SpooledFile,
  choices: ReadingChoices, createdUnitOperationId?: number,
): Promise<CsvRequest> {
  return csvRequestSchema.parse({
    duplicates: choices.duplicates, missing_values: choices.missingValues,
    unit_operation_id: unitOperation.id, mapping, file_name: spooled.name, bytes: spooled.bytes,
    start_ms: unitOperation.startMs, end_ms: unitOperation.endMs, file_path: spooled.path,
    // Settled now: a later change of the organisation's zone does not change a queued upload.
    time_zone: mapping.time_zone ?? await organizationTimeZone(db, organizationId),
    time_zone_source: mapping.time_zone ? 'mapping' : 'organization',
    created_unit_operation_id: createdUnitOperationId,
  });
}

/** The delivery is derived from the job row (which names the file and the unit operation). */
async function queueCsvJob(deps: AppDeps, job: IngestJobRow): Promise<void> {
  await enqueueIngest(deps, job);
}

/** `?wait=true`: the finished job, or its failure as 409 (window taken) or 422 (the file). */
async function settleUpload(deps: AppDeps, reply: FastifyReply, organizationId: number, job: IngestJobRow, wait: boolean): Promise<{ status: 200 | 202; job: IngestJobRow }> {
  if (!wait) return { status: 202, job };
  const finished = await waitForJob(deps.pg, deps.jobEvents, organizationId, job.id, WAIT_TIMEOUT_MS, { signal: clientLeftSignal(reply) });
  if (finished.state === 'failed') throw new HttpError(finished.result?.conflict === true ? 409 : 422, finished.error ?? 'CSV upload failed');
  return { status: finished.state === 'completed' ? 200 : 202, job: finished };
}

export async function csvUploadRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(multipart, {
    limits: { fileSize: deps.env.CSV_MAX_BYTES, files: 1, fields: 4, fieldSize: 1024 * 1024, parts: 6 },
  });
  await csvPreviewRoutes(app, deps);
  await spreadsheetConversionRoutes(app, deps);

  app.post('/api/v1/unit-operations/:id/csv-uploads', {
    config: { access: 'create' },
    schema: {
      summary: 'Upload a CSV into a unit operation (multipart: a `mapping` JSON field and the `file`, in any order); answers 202 with the ingest job',
      description: 'A unit operation without a window takes the first and last timestamps of the file as its window, unless that '
        + 'overlaps another unit operation on the same equipment (the job fails; with wait=true, 409). With replace_existing, the '
        + 'readings of the mapped instruments inside the unit operation\'s window are replaced (GET .../deletion-preview?instrument_ids= '
        + 'counts them first); nothing outside it is touched.',
      params,
      querystring: waitQuerySchema,
      response: { 200: ingestJobStatusSchema, 202: ingestJobStatusSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a mapping field and a file');
    const unitOperation = await findUnitOperation(deps.pg, principal.organizationId, request.params.id);
    await refuseLockedUnitOperation(deps.pg, principal.organizationId, unitOperation.id);
    const admission = await admitUpload(deps, principal.organizationId);
    // Whatever way the request ends, its place among the uploads being received goes back.
    reply.raw.once('close', () => void admission.finish());

    let received: CsvMapping | null = null;
    const choices = readingChoices();
    const spooledFile = await receiveParts(deps, request, admission, (name, value) => {
      if (name === 'mapping') received = parseMapping(value);
      choices.take(name, value);
    });
    const { mapping, spooled } = await requireUpload(deps, received, spooledFile);
    let job: IngestJobRow;
    try {
      await checkMappingInstruments(deps, principal.organizationId, unitOperation.equipmentId, mapping);
      await refuseUploadIntoOverlap(deps, principal.organizationId, unitOperation);
      ({ job } = await createIngestJob(deps.pg, principal, {
        kind: 'csv', request: await csvJobRequest(deps.pg, principal.organizationId, unitOperation, mapping, spooled, choices), progress: { bytes_total: spooled.bytes },
      }));
    } catch (error) {
      await rm(spooled.path, { force: true });
      throw error;
    }
    await queueCsvJob(deps, job);
    // Queued, the upload is counted from its job.
    await admission.finish();
    reply.header('location', `/api/v1/ingest-jobs/${job.id}`);
    reply.header('x-ingest-job-id', job.id);
    const settled = await settleUpload(deps, reply, principal.organizationId, job, request.query.wait === 'true');
    return reply.status(settled.status).send(toJobStatus(settled.job));
  });

  app.post('/api/v1/unit-operations/csv-uploads', {
    config: { access: 'create' },
    schema: {
      summary: 'Create a unit operation with its first CSV upload (multipart: `unit_operation` and `mapping` JSON fields and the `file`, in any order)',
      description: 'One act: the unit operation is created only when the upload is accepted, and removed again when the upload fails '
        + 'later (a rejected file, a time range overlapping another unit operation on the same equipment). Answers 202 with the unit '
        + 'operation and the ingest job; with wait=true, 200 once the data is queryable, or the failure (409, 422) with the unit '
        + 'operation gone.',
      querystring: waitQuerySchema,
      response: { 200: unitOperationWithUploadSchema, 202: unitOperationWithUploadSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with unit_operation and mapping fields and a file');
    const admission = await admitUpload(deps, principal.organizationId);
    // Whatever way the request ends, its place among the uploads being received goes back.
    reply.raw.once('close', () => void admission.finish());

    let receivedMapping: CsvMapping | null = null;
    let body: UnitOperationCreate | null = null;
    const choices = readingChoices();
    const spooledFile = await receiveParts(deps, request, admission, (name, value) => {
      if (name === 'mapping') receivedMapping = parseMapping(value);
      if (name === 'unit_operation') body = parseUnitOperation(value);
      choices.take(name, value);
    });
    const { mapping, spooled } = await requireUpload(deps, receivedMapping, spooledFile);
    let created: { row: UnitOperationRow; job: IngestJobRow };
    try {
      const unitOperationBody = body as UnitOperationCreate | null;
      if (!unitOperationBody) throw badRequest('unit_operation: required (a JSON multipart field)');
      await checkMappingInstruments(deps, principal.organizationId, unitOperationBody.equipment_id, mapping);
      created = await withTransaction(deps.pg, async (client) => {
        await refuseLockedRun(client, principal.organizationId, unitOperationBody.run_id);
        const row = await insertUnitOperation(client, principal.organizationId, unitOperationBody);
        const window = unitOperationWindow(row);
        const { job } = await insertIngestJob(client, principal, {
          // A failure of this job removes the unit operation again (shared/src/server/ingest-jobs.ts).
          kind: 'csv', request: await csvJobRequest(client, principal.organizationId, window, mapping, spooled, choices, row.id), progress: { bytes_total: spooled.bytes },
        });
        await recordAudit(client, request, {
          event_type: 'data', action: 'create', resource_type: 'unit_operation', resource_id: row.id,
          changes: { before: null, after: toUnitOperation(row) },
        });
        return { row, job };
      });
    } catch (error) {
      await rm(spooled.path, { force: true });
      throw error;
    }
    const unitOperation = toUnitOperation(created.row);
    await queueCsvJob(deps, created.job);
    await admission.finish();
    reply.header('location', `/api/v1/ingest-jobs/${created.job.id}`);
    reply.header('x-ingest-job-id', created.job.id);
    const settled = await settleUpload(deps, reply, principal.organizationId, created.job, request.query.wait === 'true');
    return reply.status(settled.status).send({ unit_operation: unitOperation, job: toJobStatus(settled.job) });
  });
}

/** An upload into a unit operation whose window overlaps another's (saved before the rule) waits until that is resolved. */
async function refuseUploadIntoOverlap(deps: AppDeps, organizationId: number, unitOperation: UnitOperationWindow): Promise<void> {
  if (unitOperation.equipmentId === null || unitOperation.startMs === null) return;
  const other = await findOverlappingUnitOperation(deps.pg, {
    organizationId, equipmentId: unitOperation.equipmentId, startMs: unitOperation.startMs, endMs: unitOperation.endMs, excludeId: unitOperation.id,
  });
  if (other) throw conflict(overlapMessage(other));
}
