/**
 * A server-side CSV upload (spec/02 §5 rules from shared/csv, issue 5 guarantees).
 *
 * One pass reads the file as a stream: every row is checked (malicious content, header, timestamp
 * format, non-numeric columns, row limit) and its points are written to the job's private staging
 * table (staging-table.ts) in bounded TSV batches, with a resume point (byte offset, row index and the
 * counters so far) committed after each durable insert. Once the whole file passed, a replacing upload
 * writes its tombstones (a version just below its own points) and the staged partitions are attached
 * to `points` in one step; a rejected file only drops its staging table, so it changes nothing.
 * Every row's version depends only on the job and the row's position, so a worker killed mid-way and
 * restarted stages exactly the same rows again: nothing twice (reads keep one row per key), nothing
 * missing. Finally newer deletions are re-applied, rollups recomputed and each instrument's alias set
 * to its column name (a failure there only warns).
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
import { applyLaterDeletions, recomputeRollups, writeTombstones } from '../points-store.ts';
import { readHead, readRecords } from '../csv/record-reader.ts';
import { attachStagedPartitions, createStagingTable, dropStagingTable, insertStaged, stagingTableName } from '../staging-table.ts';
import { TsvBuffer } from '../tsv-buffer.ts';
import { MAX_ROWS_PER_VERSION, nextRequestVersion, pointVersion } from '../versions.ts';

/** Points per staging insert: bounded memory, large enough for full insert speed. */
const INSERT_BATCH_POINTS = 500_000;
/** Initial bytes of each of the two TSV buffers (one being inserted while the other fills). */
const TSV_BUFFER_BYTES = 16 * 1024 * 1024;
/** Progress (bytes and rows read) is written at most this often. */
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

/** How the file is read (settled from its head and header) and what reading it found so far. */
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
  lastTs: number;
}

/** Where an interrupted staging pass resumes: a record boundary and everything read before it. */
interface StagingCheckpoint {
  phase: 'staging';
  /** Rows carry their own versions (the file's timestamps do not strictly increase). */
  versioned: boolean;
  byteOffset: number;
  plan: CsvPlan;
  scannerTail: string;
  resumed: boolean;
}

/** The file passed; what remains is making its rows visible. */
interface PublishCheckpoint {
  phase: 'publish';
  plan: CsvPlan;
  /** Some rows may be staged or attached twice: the rollups must deduplicate. */
  resumed: boolean;
  tombstoned: boolean;
  attaching: boolean;
  attached: boolean;
}

type Checkpoint = StagingCheckpoint | PublishCheckpoint;

/** Restarts the staging pass with a version per row: the file turned out to repeat or reorder timestamps. */
class NeedsRowVersions extends Error {}

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

/**
 * The cell's text when ClickHouse reads it as exactly the number JavaScript parsed (an optional minus,
 * digits and at most one decimal point), which spares a number-to-text conversion per point.
 */
function valueText(raw: string, value: number): string {
  const length = raw.length;
  let index = raw.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  let digits = 0;
  let point = false;
  for (; index < length; index += 1) {
    const code = raw.charCodeAt(index);
    if (code >= 48 && code <= 57) digits += 1;
    else if (code === 46 /* . */ && !point) point = true;
    else return String(value);
  }
  return digits > 0 ? raw : String(value);
}

interface StagingPass {
  context: WorkerContext;
  payload: CsvUploadPayload;
  request: CsvJobRequest;
  table: string;
  /** Where to resume, or null to read the file from its start. */
  from: StagingCheckpoint | null;
  versioned: boolean;
}

/**
 * Reads the whole file, checks every rule and stages the points; throws PermanentJobError with the
 * spec's message when the file is rejected (then nothing is staged past the first error), or
 * NeedsRowVersions when timestamps repeat and the pass ran without row versions.
 */
async function stageFile(pass: StagingPass): Promise<{ plan: CsvPlan; resumed: boolean }> {
  const { context, payload, request, table, from, versioned } = pass;
  const { mapping } = request;
  const head = await readHead(payload.file_path);
  if (head.text.replace(/^\uFEFF/, '').trim() === '') throw new PermanentJobError(CSV_MESSAGES.contentEmpty);
  const delimiter = from?.plan.delimiter ?? detectDelimiter(head.text);
  const multiSection = from?.plan.multiSection ?? isMultiSectionCsv(head.text);
  const timezoneOffsetMinutes = (multiSection ? readTimezoneBiasMinutes(head.text) : null) ?? 0;
  const decimalComma = decimalCommaAllowed(delimiter);
  if (mapping.timestamp_mode === 'elapsed' && request.start_ms === null) {
    throw new PermanentJobError('Elapsed timestamps need the unit operation to have a start time.');
  }

  const scanner = new MaliciousContentScanner(from?.scannerTail ?? '');
  const collector = new NonNumericCollector();
  const sections = !from && multiSection ? new DataSectionFilter() : null;
  let plan: CsvPlan | null = from ? { ...from.plan } : null;
  let readTimestamp: TimestampReader = plan ? timestampReader(plan, mapping, request.start_ms) : () => null;
  /** Rows are held back until 20 timestamp samples (spec/02 §9) decided the format. */
  let detected = from !== null;
  const pending: string[][] = [];
  let samples = 0;

  const organizationDefaults = { organizationId: payload.organization_id, sharedVersion: pointVersion(payload.version_seq, 0) };
  if (!from) {
    await dropStagingTable(context.clickhouse, table);
    await createStagingTable(context.clickhouse, table, organizationDefaults);
  }

  // Two buffers: one is being inserted while the next batch is parsed into the other.
  const buffers = [new TsvBuffer(TSV_BUFFER_BYTES), new TsvBuffer(TSV_BUFFER_BYTES)];
  let filling = 0;
  let bufferedPoints = 0;
  let inFlight: Promise<void> | null = null;
  let lastProgress = 0;

  const flush = async (checkpoint: StagingCheckpoint | null) => {
    if (inFlight) await inFlight;
    const batch = buffers[filling]!;
    filling = 1 - filling;
    buffers[filling]!.reset();
    bufferedPoints = 0;
    inFlight = (async () => {
      if (batch.length > 0) await insertStaged(context.clickhouse, table, Readable.from([batch.contents()], { objectMode: false }), versioned);
      if (checkpoint) await updateProgress(context.pg, payload.job_id, { points_written: checkpoint.plan.points }, checkpoint);
    })();
    // Attach a handler now so a failure surfaces at the next await, not as an unhandled rejection.
    inFlight.catch(() => undefined);
  };

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
    plan = {
      delimiter, encoding: head.encoding, multiSection, width: names.length, timestampIndex,
      columns: mapping.columns.map((entry) => ({ index: find(entry.column), column: names[find(entry.column)]!, instrumentId: entry.instrument_id })),
      detection: null, timezoneOffsetMinutes, decimalComma, dataRows: 0, validRows: 0, skippedBadTimestamp: 0,
      skippedOutOfRange: 0, points: 0, minTs: Number.POSITIVE_INFINITY, maxTs: Number.NEGATIVE_INFINITY, increasing: true,
      lastTs: Number.NEGATIVE_INFINITY,
    };
  };

  const consider = (row: string[], index: number) => {
    const current = plan!;
    fitRowToWidth(row, current.width);
    const ts = readTimestamp(row[current.timestampIndex]!);
    const valid = ts !== null && inWindow(ts, request);
    // Every cell is checked, also on skipped rows: a non-numeric column fails the upload either way.
    const failing = collector.hasErrors;
    let rowText = '';
    let rowPoints = 0;
    const tsText = valid ? `\t${ts}\t` : '';
    const lineEnd = versioned ? `\t${pointVersion(payload.version_seq, index)}\n` : '\n';
    for (let c = 0; c < current.columns.length; c += 1) {
      const column = current.columns[c]!;
      const raw = row[column.index]!;
      const value = collector.check(column.column, raw, { decimalComma });
      if (value === null || value !== value /* NaN */ || !valid) continue;
      rowPoints += 1;
      if (!failing) rowText += `${column.instrumentId}${tsText}${valueText(raw, value)}${lineEnd}`;
    }
    if (ts === null) {
      current.skippedBadTimestamp += 1;
      return;
    }
    if (!valid) {
      current.skippedOutOfRange += 1;
      return;
    }
    current.validRows += 1;
    current.points += rowPoints;
    if (ts <= current.lastTs) {
      current.increasing = false;
      if (!versioned && !collector.hasErrors) throw new NeedsRowVersions();
    }
    current.lastTs = ts;
    if (ts < current.minTs) current.minTs = ts;
    if (ts > current.maxTs) current.maxTs = ts;
    if (rowText.length > 0 && !collector.hasErrors) {
      buffers[filling]!.append(rowText);
      bufferedPoints += rowPoints;
    }
  };

  const detect = () => {
    const current = plan!;
    if (mapping.timestamp_mode === 'absolute') {
      const detection = detectTimestampFormat(pending.map((row) => row[current.timestampIndex] ?? ''), { columnName: mapping.timestamp_column });
      current.detection = { format: detection.format, order: detection.order, dayFirst: detection.dayFirst, confidence: detection.confidence };
    }
    readTimestamp = timestampReader(current, mapping, request.start_ms);
    detected = true;
    const firstIndex = current.dataRows - pending.length;
    pending.splice(0).forEach((row, offset) => consider(row, firstIndex + offset));
  };

  try {
    return await readAndStage();
  } finally {
    // A rejected file's staging table is dropped next: let the insert still running end first.
    await (inFlight as Promise<void> | null)?.catch(() => undefined);
  }

  async function readAndStage(): Promise<{ plan: CsvPlan; resumed: boolean }> {
    let headerSeen = from !== null;
    reading: for await (const batch of readRecords({
      filePath: payload.file_path, delimiter, encoding: from?.plan.encoding, startByte: from?.byteOffset ?? 0, signal: context.shutdown,
    })) {
      if (scanner.push(batch.text)) throw new PermanentJobError(CSV_MESSAGES.maliciousContent);
      for (const row of batch.rows) {
        if (sections) {
          const verdict = sections.accept(row);
          if (verdict === 'skip') continue;
          if (verdict === 'end') break reading;
          if (verdict === 'header') {
            settleHeader(row);
            headerSeen = true;
            continue;
          }
        } else if (!headerSeen) {
          settleHeader(row);
          headerSeen = true;
          continue;
        } else if (from && multiSection && sectionNameOfRow(row) !== null) {
          break reading; // resumed inside the data table: the next section ends it
        }
        const current = plan!;
        const index = current.dataRows;
        current.dataRows += 1;
        const tooMany = checkRowLimit(current.dataRows, context.env.CSV_MAX_ROWS);
        if (tooMany) throw new PermanentJobError(tooMany);
        if (current.dataRows > MAX_ROWS_PER_VERSION) throw new PermanentJobError(`The file has more than ${MAX_ROWS_PER_VERSION} rows`);
        if (!detected) {
          pending.push(row);
          if ((row[current.timestampIndex] ?? '').trim() !== '') samples += 1;
          if (samples >= CSV_LIMITS.dateDetectionSampleSize || mapping.timestamp_mode === 'elapsed') detect();
        } else {
          consider(row, index);
        }
      }
      const current = plan as CsvPlan | null;
      if (!current) continue;
      if (batch.boundary && detected && !collector.hasErrors && bufferedPoints >= INSERT_BATCH_POINTS) {
        await flush({
          phase: 'staging', versioned, byteOffset: batch.byteEnd, plan: { ...current }, scannerTail: scanner.tail, resumed: from !== null,
        });
      }
      if (Date.now() - lastProgress > PROGRESS_INTERVAL_MS) {
        lastProgress = Date.now();
        await updateProgress(context.pg, payload.job_id, { bytes_read: batch.byteEnd, rows_read: current.dataRows });
      }
    }
    if (plan === null) throw new PermanentJobError(CSV_MESSAGES.headerRequired);
    const current: CsvPlan = plan;
    if (!detected) detect();
    const badValues = collector.message();
    if (badValues) throw new PermanentJobError(badValues);
    if (current.validRows === 0 || current.points === 0) throw new PermanentJobError(CSV_MESSAGES.noValidData);
    await flush(null);
    if (inFlight) await inFlight;
    return { plan: current, resumed: from !== null };
  }
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

/** Makes the staged rows visible: tombstones of a replacing upload, then the staged partitions. */
async function publish(context: WorkerContext, payload: CsvUploadPayload, request: CsvJobRequest, table: string, start: PublishCheckpoint): Promise<PublishCheckpoint> {
  let checkpoint = start;
  const save = async (next: PublishCheckpoint) => {
    checkpoint = next;
    await updateProgress(context.pg, payload.job_id, {}, next);
  };
  const range = rangeOf(payload, checkpoint.plan);
  if (request.mapping.replace_existing && !checkpoint.tombstoned) {
    await context.pg.query(
      `INSERT INTO time_series_deletions (organization_id, job_id, version_seq, instrument_ids, start_ms, end_ms)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
      [payload.organization_id, payload.job_id, payload.version_seq, range.instrumentIds, range.startMs, range.endMs],
    );
    await writeTombstones(context.clickhouse, range, payload.version_seq);
    await save({ ...checkpoint, tombstoned: true });
  }
  if (!checkpoint.attached) {
    // A crash while attaching may leave some partitions attached twice (identical rows).
    await save({ ...checkpoint, attaching: true, resumed: checkpoint.resumed || checkpoint.attaching });
    await attachStagedPartitions(context.clickhouse, table);
    await save({ ...checkpoint, attached: true });
  }
  await dropStagingTable(context.clickhouse, table);
  return checkpoint;
}

function rangeOf(payload: CsvUploadPayload, plan: CsvPlan) {
  return {
    organizationId: payload.organization_id,
    instrumentIds: [...new Set(plan.columns.map((column) => column.instrumentId))],
    startMs: plan.minTs,
    endMs: plan.maxTs,
  };
}

/** Runs the staging pass from the checkpoint (or the start), once more with row versions if needed. */
async function stageAll(context: WorkerContext, payload: CsvUploadPayload, request: CsvJobRequest, table: string, from: StagingCheckpoint | null): Promise<PublishCheckpoint> {
  let staged: { plan: CsvPlan; resumed: boolean };
  try {
    staged = await stageFile({ context, payload, request, table, from, versioned: from?.versioned ?? false });
  } catch (error) {
    if (!(error instanceof NeedsRowVersions)) throw error;
    context.logger.info({ jobId: payload.job_id }, 'timestamps repeat or go back: staging again with a version per row');
    staged = await stageFile({ context, payload, request, table, from: null, versioned: true });
  }
  const checkpoint: PublishCheckpoint = { phase: 'publish', plan: staged.plan, resumed: staged.resumed, tombstoned: false, attaching: false, attached: false };
  await updateProgress(context.pg, payload.job_id, {
    bytes_read: request.bytes, rows_read: staged.plan.dataRows, rows_skipped: staged.plan.skippedBadTimestamp + staged.plan.skippedOutOfRange,
    points_written: staged.plan.points,
  }, checkpoint);
  return checkpoint;
}

export async function processCsvUpload(context: WorkerContext, payload: CsvUploadPayload, _job: Job): Promise<void> {
  const record = await loadJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const request = record.request as unknown as CsvJobRequest;
  request.mapping = csvMappingSchema.parse(request.mapping);
  const table = stagingTableName(payload.job_id);
  try {
    const saved = record.checkpoint as Checkpoint | null;
    let checkpoint: PublishCheckpoint = saved?.phase === 'publish'
      ? saved
      : await stageAll(context, payload, request, table, saved?.phase === 'staging' ? saved : null);
    checkpoint = await publish(context, payload, request, table, checkpoint);

    const { plan } = checkpoint;
    const range = rangeOf(payload, plan);
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
      await dropStagingTable(context.clickhouse, table).catch((dropError: unknown) => {
        context.logger.warn({ err: dropError, table }, 'staging table of a rejected upload could not be dropped');
      });
      await markFailed(context.pg, payload.job_id, error.message);
      await rm(payload.file_path, { force: true });
    }
    throw error;
  }
}
