/**
 * A server-side CSV upload (spec/02 §5 rules from shared/csv, issue 5 guarantees).
 *
 * Pass one validates the whole file without writing anything (malicious content, header, timestamp
 * format, non-numeric columns, row limit, "no valid data"), so a rejected upload changes nothing.
 * Pass two writes: for a replacing upload it records the cleared range and writes tombstones (with
 * a version just below its own points), then streams the rows into ClickHouse in bounded TSV batches,
 * committing a resume point (byte offset + row index) after each durable insert. Every row's version
 * depends only on the job and the row's position, so a worker killed mid-way and restarted re-inserts
 * exactly the same rows: nothing twice (reads keep one row per key), nothing missing.
 * Finally newer deletions are re-applied, rollups recomputed and each instrument's alias set to its
 * column name (a failure there only warns).
 */
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Job } from 'bullmq';
import type { CsvUploadPayload } from '@bioprocess/shared/queues';
import {
  CSV_LIMITS,
  CSV_MESSAGES,
  DataSectionFilter,
  MaliciousContentScanner,
  NonNumericCollector,
  checkRowLimit,
  createTimestampParser,
  decimalCommaAllowed,
  detectDelimiter,
  detectTimestampFormat,
  elapsedToEpochMs,
  fitRowToWidth,
  isLowConfidence,
  isMultiSectionCsv,
  lowDateConfidenceMessage,
  parseNumericCell,
  readTimezoneBiasMinutes,
  sanitizeHeaders,
  sectionNameOfRow,
  uploadSuccessMessage,
  type CsvDelimiter,
  type CsvEncoding,
  type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import { csvMappingSchema, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, type CsvMapping, type IngestProgress } from '@bioprocess/shared/timeseries';
import type { WorkerContext } from '../context.ts';
import { PermanentJobError } from '../errors.ts';
import { loadJob, markCompleted, markFailed, updateProgress } from '../job-store.ts';
import { applyLaterDeletions, insertPointsTsv, recomputeRollups, writeTombstones } from '../points-store.ts';
import { readHead, readRecords } from '../csv/record-reader.ts';
import { int } from '../sql.ts';
import { TsvBuffer } from '../tsv-buffer.ts';
import { MAX_ROWS_PER_VERSION, nextRequestVersion, pointVersion } from '../versions.ts';

/** Points per ClickHouse insert: bounded memory, large enough for full insert speed. */
const INSERT_BATCH_POINTS = 300_000;
/** Initial bytes of each of the two TSV buffers (one being inserted while the other fills). */
const TSV_BUFFER_BYTES = 24 * 1024 * 1024;
/** Progress is written at most this often during the validation pass. */
const PROGRESS_INTERVAL_MS = 500;

export interface CsvJobRequest {
  unit_operation_id: number;
  mapping: CsvMapping;
  file_name: string;
  bytes: number;
  /** The unit operation's window at upload time (rows outside are skipped). */
  start_ms: number | null;
  end_ms: number | null;
}

/** What pass one settled, so pass two (and a resumed pass two) reads the file the same way. */
interface CsvPlan {
  delimiter: CsvDelimiter;
  encoding: CsvEncoding;
  multiSection: boolean;
  width: number;
  timestampIndex: number;
  columns: Array<{ index: number; column: string; instrumentId: number }>;
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst' | 'confidence'> | null;
  timezoneOffsetMinutes: number;
  decimalComma: boolean;
  dataRows: number;
  validRows: number;
  skippedBadTimestamp: number;
  skippedOutOfRange: number;
  points: number;
  minTs: number;
  maxTs: number;
  /** Timestamps of valid rows strictly increase: no key appears twice within the file. */
  increasing: boolean;
}

interface Checkpoint {
  plan: CsvPlan;
  tombstoned: boolean;
  /** Resume point of pass two: a record boundary after the header, and the data row index there. */
  byteOffset: number | null;
  rowIndex: number;
  pointsWritten: number;
  resumed: boolean;
}

type TimestampReader = (raw: string) => number | null;

function timestampReader(plan: Pick<CsvPlan, 'detection' | 'timezoneOffsetMinutes'>, mapping: CsvMapping, startMs: number | null): TimestampReader {
  if (mapping.timestamp_mode === 'elapsed') {
    const unit = mapping.elapsed_unit!;
    return (raw) => {
      const value = parseNumericCell(raw);
      return value === null || Number.isNaN(value) ? null : elapsedToEpochMs(value, unit, startMs!);
    };
  }
  if (!plan.detection) return () => null;
  return createTimestampParser(plan.detection, { timezoneOffsetMinutes: plan.timezoneOffsetMinutes });
}

function inWindow(ts: number, request: CsvJobRequest): boolean {
  if (ts < MIN_TIMESTAMP_MS || ts > MAX_TIMESTAMP_MS) return false;
  if (request.start_ms !== null && ts < request.start_ms) return false;
  if (request.end_ms !== null && ts > request.end_ms) return false;
  return true;
}

/** Pass one: reads the whole file, writes nothing, and either fails the upload or returns the plan. */
async function validate(context: WorkerContext, payload: CsvUploadPayload, request: CsvJobRequest): Promise<CsvPlan> {
  const { mapping } = request;
  const head = await readHead(payload.file_path);
  if (head.text.replace(/^\uFEFF/, '').trim() === '') throw new PermanentJobError(CSV_MESSAGES.contentEmpty);
  const delimiter = detectDelimiter(head.text);
  const multiSection = isMultiSectionCsv(head.text);
  const timezoneOffsetMinutes = (multiSection ? readTimezoneBiasMinutes(head.text) : null) ?? 0;
  const decimalComma = decimalCommaAllowed(delimiter);
  if (mapping.timestamp_mode === 'elapsed' && request.start_ms === null) {
    throw new PermanentJobError('Elapsed timestamps need the unit operation to have a start time.');
  }

  const scanner = new MaliciousContentScanner();
  const collector = new NonNumericCollector();
  const sections = multiSection ? new DataSectionFilter() : null;
  let header: string[] | null = null;
  let plan: CsvPlan | null = null;
  let readTimestamp: TimestampReader = () => null;
  /** Rows are held back until 20 timestamp samples (spec/02 §9) decided the format. */
  let detected = false;
  const pending: string[][] = [];
  let lastProgress = 0;
  let lastTs = Number.NEGATIVE_INFINITY;

  const settleHeader = (row: string[]) => {
    const names = sanitizeHeaders(row);
    const find = (column: string) => {
      const wanted = column.trim().toLowerCase();
      return names.findIndex((name) => name.toLowerCase() === wanted);
    };
    const timestampIndex = find(mapping.timestamp_column);
    if (timestampIndex === -1) throw new PermanentJobError(`Timestamp column '${mapping.timestamp_column}' is not in the CSV header.`);
    const missing = mapping.columns.filter((entry) => find(entry.column) === -1).map((entry) => entry.column);
    if (missing.length > 0) throw new PermanentJobError(`Columns not found in the CSV header: ${missing.join(', ')}`);
    header = names;
    plan = {
      delimiter, encoding: head.encoding, multiSection, width: names.length, timestampIndex,
      columns: mapping.columns.map((entry) => ({ index: find(entry.column), column: names[find(entry.column)]!, instrumentId: entry.instrument_id })),
      detection: null, timezoneOffsetMinutes, decimalComma, dataRows: 0, validRows: 0, skippedBadTimestamp: 0,
      skippedOutOfRange: 0, points: 0, minTs: Number.POSITIVE_INFINITY, maxTs: Number.NEGATIVE_INFINITY, increasing: true,
    };
  };

  const consider = (row: string[]) => {
    const current = plan!;
    fitRowToWidth(row, current.width);
    let rowPoints = 0;
    for (const column of current.columns) {
      const value = collector.check(column.column, row[column.index]!, { decimalComma });
      if (value !== null && !Number.isNaN(value)) rowPoints += 1;
    }
    const ts = readTimestamp(row[current.timestampIndex]!);
    if (ts === null) {
      current.skippedBadTimestamp += 1;
      return;
    }
    if (!inWindow(ts, request)) {
      current.skippedOutOfRange += 1;
      return;
    }
    current.validRows += 1;
    current.points += rowPoints;
    if (ts <= lastTs) current.increasing = false;
    lastTs = ts;
    if (ts < current.minTs) current.minTs = ts;
    if (ts > current.maxTs) current.maxTs = ts;
  };

  const detect = () => {
    const current = plan!;
    if (mapping.timestamp_mode === 'absolute') {
      const detection = detectTimestampFormat(pending.map((row) => row[current.timestampIndex] ?? ''), { columnName: mapping.timestamp_column });
      current.detection = { format: detection.format, order: detection.order, dayFirst: detection.dayFirst, confidence: detection.confidence };
    }
    readTimestamp = timestampReader(current, mapping, request.start_ms);
    detected = true;
    for (const row of pending.splice(0)) consider(row);
  };

  let samples = 0;
  reading: for await (const batch of readRecords({ filePath: payload.file_path, delimiter, signal: context.shutdown })) {
    if (scanner.push(batch.text)) throw new PermanentJobError(CSV_MESSAGES.maliciousContent);
    const bytesRead = batch.byteEnd;
    for (const row of batch.rows) {
      if (sections) {
        const verdict = sections.accept(row);
        if (verdict === 'skip') continue;
        if (verdict === 'end') break reading;
        if (verdict === 'header') {
          settleHeader(row);
          continue;
        }
      } else if (header === null) {
        settleHeader(row);
        continue;
      }
      const current = plan!;
      current.dataRows += 1;
      const tooMany = checkRowLimit(current.dataRows, context.env.CSV_MAX_ROWS);
      if (tooMany) throw new PermanentJobError(tooMany);
      if (current.dataRows > MAX_ROWS_PER_VERSION) throw new PermanentJobError(`The file has more than ${MAX_ROWS_PER_VERSION} rows`);
      if (!detected) {
        pending.push(row);
        if ((row[current.timestampIndex] ?? '').trim() !== '') samples += 1;
        if (samples >= CSV_LIMITS.dateDetectionSampleSize || mapping.timestamp_mode === 'elapsed') detect();
      } else {
        consider(row);
      }
    }
    if (Date.now() - lastProgress > PROGRESS_INTERVAL_MS && plan) {
      lastProgress = Date.now();
      const current: CsvPlan = plan;
      await updateProgress(context.pg, payload.job_id, { bytes_read: Math.floor(bytesRead / 2), rows_read: current.dataRows });
    }
  }
  if (header === null || plan === null) throw new PermanentJobError(CSV_MESSAGES.headerRequired);
  const current: CsvPlan = plan;
  if (!detected) detect();
  const badValues = collector.message();
  if (badValues) throw new PermanentJobError(badValues);
  if (current.validRows === 0 || current.points === 0) throw new PermanentJobError(CSV_MESSAGES.noValidData);
  return current;
}

async function setAliases(context: WorkerContext, organizationId: number, plan: CsvPlan): Promise<string[]> {
  const warnings: string[] = [];
  for (const column of plan.columns) {
    try {
      await context.pg.query('UPDATE instruments SET alias = $1, updated_at = now() WHERE id = $2 AND organization_id = $3', [column.column, column.instrumentId, organizationId]);
    } catch (error) {
      context.logger.warn({ err: error, instrumentId: column.instrumentId }, 'instrument alias update failed');
      warnings.push(`The alias of instrument ${column.instrumentId} could not be saved.`);
    }
  }
  return warnings;
}

/** Pass two: writes the rows from the checkpoint on, committing a resume point after each insert. */
async function write(context: WorkerContext, payload: CsvUploadPayload, request: CsvJobRequest, checkpoint: Checkpoint): Promise<Checkpoint> {
  const { plan } = checkpoint;
  const readTimestamp = timestampReader(plan, request.mapping, request.start_ms);
  const organization = int(payload.organization_id);
  const instrumentTexts = plan.columns.map((column) => String(column.instrumentId));
  const fresh = checkpoint.byteOffset === null;
  const sections = fresh && plan.multiSection ? new DataSectionFilter() : null;
  let headerSeen = !fresh;
  let rowIndex = checkpoint.rowIndex;
  let pointsWritten = checkpoint.pointsWritten;
  // Two buffers: one is being inserted while the next batch is parsed into the other.
  const buffers = [new TsvBuffer(TSV_BUFFER_BYTES), new TsvBuffer(TSV_BUFFER_BYTES)];
  let filling = 0;
  let inFlight: Promise<void> | null = null;
  let committed = checkpoint;

  const commit = async (next: Checkpoint) => {
    committed = next;
    await updateProgress(context.pg, payload.job_id, {
      bytes_read: Math.floor((request.bytes + (next.byteOffset ?? 0)) / 2),
      points_written: next.pointsWritten,
    }, next);
  };
  const flush = async (byteOffset: number) => {
    if (inFlight) await inFlight;
    const batch = buffers[filling]!;
    filling = 1 - filling;
    buffers[filling]!.reset();
    const next: Checkpoint = { ...committed, byteOffset, rowIndex, pointsWritten: pointsWritten };
    inFlight = (async () => {
      if (batch.length > 0) await insertPointsTsv(context.clickhouse, Readable.from([batch.contents()], { objectMode: false }));
      await commit(next);
    })();
    // Attach a handler now so a failure surfaces at the next await, not as an unhandled rejection.
    inFlight.catch(() => undefined);
  };

  reading: for await (const batch of readRecords({
    filePath: payload.file_path, delimiter: plan.delimiter, encoding: plan.encoding,
    startByte: checkpoint.byteOffset ?? 0, signal: context.shutdown,
  })) {
    for (const row of batch.rows) {
      if (sections) {
        const verdict = sections.accept(row);
        if (verdict === 'skip') continue;
        if (verdict === 'end') break reading;
        if (verdict === 'header') {
          headerSeen = true;
          continue;
        }
      } else if (!headerSeen) {
        headerSeen = true;
        continue;
      } else if (plan.multiSection && sectionNameOfRow(row) !== null) {
        break reading; // resumed inside the data table: the next section ends it
      }
      const index = rowIndex;
      rowIndex += 1;
      fitRowToWidth(row, plan.width);
      const ts = readTimestamp(row[plan.timestampIndex]!);
      if (ts === null || !inWindow(ts, request)) continue;
      const prefix = `${organization}\t`;
      const suffix = `\t${pointVersion(payload.version_seq, index)}\t0\n`;
      for (let c = 0; c < plan.columns.length; c += 1) {
        const column = plan.columns[c]!;
        const value = parseNumericCell(row[column.index]!, { decimalComma: plan.decimalComma });
        if (value === null || Number.isNaN(value)) continue;
        buffers[filling]!.append(`${prefix}${instrumentTexts[c]}\t${ts}\t${value}${suffix}`);
        pointsWritten += 1;
      }
    }
    if (batch.boundary && headerSeen && buffers[filling]!.lines >= INSERT_BATCH_POINTS) await flush(batch.byteEnd);
  }
  await flush(Number.MAX_SAFE_INTEGER);
  if (inFlight) await inFlight;
  return committed;
}

export async function processCsvUpload(context: WorkerContext, payload: CsvUploadPayload, _job: Job): Promise<void> {
  const record = await loadJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const request = record.request as unknown as CsvJobRequest;
  request.mapping = csvMappingSchema.parse(request.mapping);
  try {
    let checkpoint = record.checkpoint as Checkpoint | null;
    if (!checkpoint) {
      const plan = await validate(context, payload, request);
      checkpoint = { plan, tombstoned: false, byteOffset: null, rowIndex: 0, pointsWritten: 0, resumed: false };
      await updateProgress(context.pg, payload.job_id, {
        bytes_read: Math.floor(request.bytes / 2), rows_read: plan.dataRows,
        rows_skipped: plan.skippedBadTimestamp + plan.skippedOutOfRange,
      }, checkpoint);
    } else if (checkpoint.byteOffset !== null) {
      checkpoint = { ...checkpoint, resumed: true };
    }
    const { plan } = checkpoint;
    const range = {
      organizationId: payload.organization_id,
      instrumentIds: [...new Set(plan.columns.map((column) => column.instrumentId))],
      startMs: plan.minTs,
      endMs: plan.maxTs,
    };
    if (request.mapping.replace_existing && !checkpoint.tombstoned) {
      await context.pg.query(
        `INSERT INTO time_series_deletions (organization_id, job_id, version_seq, instrument_ids, start_ms, end_ms)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
        [payload.organization_id, payload.job_id, payload.version_seq, range.instrumentIds, range.startMs, range.endMs],
      );
      await writeTombstones(context.clickhouse, range, payload.version_seq);
      checkpoint = { ...checkpoint, tombstoned: true };
      await updateProgress(context.pg, payload.job_id, {}, checkpoint);
    }
    if (checkpoint.byteOffset !== Number.MAX_SAFE_INTEGER) checkpoint = await write(context, payload, request, checkpoint);

    await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
    const ownRowsOnly = plan.increasing && !checkpoint.resumed;
    await recomputeRollups(context.clickhouse, context.pg, range, ownRowsOnly
      ? { fromVersion: pointVersion(payload.version_seq, 0), toVersion: nextRequestVersion(payload.version_seq) }
      : undefined);
    const warnings = await setAliases(context, payload.organization_id, plan);
    const skipped = plan.skippedBadTimestamp + plan.skippedOutOfRange;
    const progress: Partial<IngestProgress> = {
      bytes_total: request.bytes, bytes_read: request.bytes, rows_read: plan.dataRows, rows_skipped: skipped, points_written: plan.points,
    };
    await markCompleted(context.pg, payload.job_id, {
      message: uploadSuccessMessage(plan.columns.length, plan.points),
      points_written: plan.points,
      rows_read: plan.dataRows,
      rows_valid: plan.validRows,
      rows_skipped_bad_timestamp: plan.skippedBadTimestamp,
      rows_skipped_out_of_range: plan.skippedOutOfRange,
      instruments: range.instrumentIds.length,
      start_time: new Date(plan.minTs).toISOString(),
      end_time: new Date(plan.maxTs).toISOString(),
      replaced: request.mapping.replace_existing,
      timestamp_format: plan.detection?.format ?? `elapsed ${request.mapping.elapsed_unit}`,
      timestamp_confidence: plan.detection?.confidence ?? 1,
      notice: plan.detection && isLowConfidence(plan.detection) ? lowDateConfidenceMessage(plan.detection.confidence) : null,
      warnings,
    }, progress);
    await rm(payload.file_path, { force: true });
  } catch (error) {
    if (error instanceof PermanentJobError) {
      await markFailed(context.pg, payload.job_id, error.message);
      await rm(payload.file_path, { force: true });
    }
    throw error;
  }
}
