/**
 * A server-side CSV upload, checked by the shared CSV rules (shared/csv).
 *
 * One pass reads the file as a stream: every row is checked (malicious content, header, timestamp
 * format, non-numeric columns, row limit) and its points are written to the job's private staging
 * table (staging-table.ts) in bounded RowBinary batches, with a resume point (byte offset, row index and the
 * counters so far) committed after each durable insert. Once the whole file passed, a replacing upload
 * writes its tombstones (a version just below its own points) and the staged partitions are attached
 * to `points` in one step; a rejected file only drops its staging table, so it changes nothing.
 * Every row's version depends only on the job and the row's position, so a worker killed mid-way and
 * restarted stages exactly the same rows again: nothing twice (reads keep one row per key), nothing
 * missing. Finally newer deletions are re-applied, rollups recomputed and each instrument's alias set
 * to its column name (a failure there only warns).
 */
import { recordDeletion, startJob, updateProgress } from '@bioprocess/shared/server/ingest-jobs';
import { csvRequestSchema, type CsvRequest } from '@bioprocess/shared/ingest/requests';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Job } from 'bullmq';
import type { CsvUploadPayload } from '@bioprocess/shared/queues';
import {
  isLowConfidence, keyColumnsOf, longFormatAlias, lowDateConfidenceMessage, rowFiltersMessage, skippedRowsMessage, totalSkippedRows, uploadSuccessMessage,
  type SkippedRowCounts,
} from '@bioprocess/shared/csv/index';
import type { IngestProgress } from '@bioprocess/shared/timeseries';
import type { WorkerContext } from '../context.ts';
import { PermanentJobError } from '../errors.ts';
import { markCompleted, markFailed, withJobLease } from '../job-store.ts';
import { applyLaterDeletions, countLiveReadings, writeTombstones } from '../deletions.ts';
import { recomputeRollups } from '../rollups/recompute.ts';
import { CsvRejected, NeedsRowVersions, type CsvPlan, type StagingCheckpoint } from '../csv/staging-reader.ts';
import { stageInThread } from '../csv/staging-thread-runner.ts';
import { attachStagedPartitions, countStagedDuplicates, createStagingTable, dropStagingTable, insertStaged, stagingTableName } from '../staging-table.ts';
import { pointVersion, rowIndexOfVersion } from '@bioprocess/shared/ingest/versions';
import {
  duplicatesKeptMessage, duplicatesRefusedMessage, type DuplicateSummary, type FlaggedCells,
} from '@bioprocess/shared/ingest/csv-result';
import { flaggedCellsMessage } from '@bioprocess/shared/csv/flagged-cells';
import type { DuplicatePolicy } from '@bioprocess/shared/ingest/requests';
import { overlapMessage, UNIT_OPERATION_WINDOW_MESSAGES, type TimeWindow } from '@bioprocess/shared/unit-operation-windows';
import { findOverlappingUnitOperation, lockUnitOperationWindow, setUnitOperationWindow } from '@bioprocess/shared/server/unit-operations-repository';
import { setInstrumentAlias } from '@bioprocess/shared/server/instruments-repository';
import { lockEquipmentForWindows } from '@bioprocess/shared/server/unit-operation-windows';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { closeWindowAtLastReading } from './csv-window-close.ts';
import { announceAllPointsStored, type PointsStoredEntry } from '@bioprocess/shared/server/points-stored';

/** The file's range is another unit operation's time on the same equipment. */
class WindowTakenError extends PermanentJobError {}

/** Rows share a stored key and the upload said to refuse such a file: the job's result names them. */
class DuplicatesRefused extends PermanentJobError {
  constructor(readonly summary: DuplicateSummary) {
    super(duplicatesRefusedMessage(summary));
  }
}

/** Points per staging insert: bounded memory, large enough for full insert speed. */
const INSERT_BATCH_POINTS = 500_000;

/** The file passed; what remains is making its rows visible. */
interface PublishCheckpoint {
  phase: 'publish';
  plan: CsvPlan;
  /** The unit operation's window once the file passed (taken from the file when it had none). */
  window?: TimeWindow;
  /** Readings a replacing upload removed, counted just before its tombstones. */
  pointsRemoved?: number;
  /** Some rows may be staged or attached twice: the rollups must deduplicate. */
  resumed: boolean;
  /** Rows that share a stored key, counted in the staging table (absent from checkpoints written before the count existed). */
  duplicates?: DuplicateSummary;
  tombstoned: boolean;
  attaching: boolean;
  attached: boolean;
}

type Checkpoint = StagingCheckpoint | PublishCheckpoint;

/** What the upload does with rows sharing a key; records accepted before the choice existed kept the last row. */
function duplicatePolicy(request: CsvRequest): DuplicatePolicy {
  return request.duplicates ?? 'keep-last';
}

/** Points stored: the staged ones, less the rows a duplicate key did not keep. */
function pointsStored(checkpoint: PublishCheckpoint): number {
  return checkpoint.plan.points - (checkpoint.duplicates?.rows_dropped ?? 0);
}

/** Flagged cells per column entry, for the job's result (entries without any left out). */
function flaggedCells(plan: CsvPlan): FlaggedCells {
  return (plan.flagged ?? []).flatMap((entry, index) => {
    if (entry.count === 0) return [];
    const column = plan.columns[index]!;
    return [{ column: column.column, key: column.key, count: entry.count, examples: entry.examples }];
  });
}

/**
 * Counts the staged rows that share a stored key. Only a versioned pass can hold any: without row
 * versions, every instrument's timestamps strictly increased.
 */
async function summariseDuplicates(context: WorkerContext, plan: CsvPlan, table: string, policy: DuplicatePolicy, versioned: boolean): Promise<DuplicateSummary> {
  if (!versioned) return { policy, keys: 0, rows_dropped: 0, first: null };
  const firstWins = policy === 'keep-first';
  const found = await countStagedDuplicates(context.clickhouse, table, firstWins);
  const first = found.first;
  const entry = first ? plan.columns.find((column) => column.instrumentId === first.instrumentId) : undefined;
  return {
    policy,
    keys: found.keys,
    rows_dropped: policy === 'refuse' ? 0 : found.extraRows,
    first: first && entry ? {
      instrument_id: first.instrumentId,
      column: entry.key === null ? entry.column : `${entry.column} (${entry.key})`,
      time: new Date(first.ts).toISOString(),
      first_line: rowIndexOfVersion(first.firstVersion, firstWins) + 1,
      last_line: rowIndexOfVersion(first.lastVersion, firstWins) + 1,
      rows: first.rows,
    } : null,
  };
}

function skippedCounts(plan: CsvPlan): SkippedRowCounts {
  return {
    badTimestamp: plan.skippedBadTimestamp, outsideWindow: plan.skippedOutOfRange, empty: plan.skippedEmpty, unselectedKey: plan.skippedUnselectedKey,
    filtered: plan.skippedFiltered ?? 0,
  };
}

/** The alias an upload gives an instrument: its column, and in long format the key as well. */
function aliasOf(column: CsvPlan['columns'][number], keyColumns: readonly string[]): string {
  return column.key !== null && keyColumns.length > 0 ? longFormatAlias(column.column, keyColumns, column.key) : column.column;
}

async function setAliases(context: WorkerContext, organizationId: number, plan: CsvPlan, keyColumns: readonly string[]): Promise<string[]> {
  const warnings: string[] = [];
  for (const column of plan.columns) {
    try {
      await setInstrumentAlias(context.pg, organizationId, column.instrumentId, aliasOf(column, keyColumns));
    } catch (error) {
      context.logger.warn({ err: error, instrumentId: column.instrumentId }, 'instrument alias update failed');
      warnings.push(`The alias of instrument ${column.instrumentId} could not be saved.`);
    }
  }
  return warnings;
}

/** Makes the staged rows visible: tombstones of a replacing upload, then the staged partitions. */
async function publish(context: WorkerContext, payload: CsvUploadPayload, request: CsvRequest, table: string, start: PublishCheckpoint): Promise<PublishCheckpoint> {
  let checkpoint = start;
  const save = async (next: PublishCheckpoint) => {
    checkpoint = next;
    await updateProgress(context.pg, payload.job_id, {}, next);
  };
  if (request.mapping.replace_existing && !checkpoint.tombstoned) {
    // A replace clears the mapped instruments' readings in the unit operation's window, never beyond it.
    const range = replacedRange(payload, checkpoint);
    await recordDeletion(context.pg, { ...range, organizationId: payload.organization_id, jobId: payload.job_id, versionSeq: payload.version_seq });
    const pointsRemoved = checkpoint.pointsRemoved ?? await countLiveReadings(context.clickhouse, range, payload.version_seq);
    await save({ ...checkpoint, pointsRemoved });
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

function replacedRange(payload: CsvUploadPayload, checkpoint: PublishCheckpoint) {
  const window = checkpoint.window ?? { startMs: checkpoint.plan.minTs, endMs: checkpoint.plan.maxTs };
  return { ...rangeOf(payload, checkpoint.plan), startMs: window.startMs, endMs: window.endMs };
}

/**
 * Gives a unit operation without a start the file's first and last timestamps as its window, under
 * the one-at-a-time rule of its equipment (refused when another unit operation holds that time), and
 * answers the window the upload works in. An open end runs until now, or to the file's last reading.
 */
async function claimWindow(context: WorkerContext, payload: CsvUploadPayload, request: CsvRequest, plan: CsvPlan): Promise<TimeWindow> {
  return withTransaction(context.pg, async (client) => {
    const row = await lockUnitOperationWindow(client, payload.organization_id, payload.unit_operation_id);
    if (!row) throw new PermanentJobError(UNIT_OPERATION_WINDOW_MESSAGES.unitOperationGone);
    const endMs = row.end_time?.getTime() ?? null;
    // An upload closing an open end works (and replaces) only up to its last reading.
    const openEndMs = request.mapping.close_open_end ? plan.maxTs : Math.max(Date.now(), plan.maxTs);
    if (row.start_time !== null) return { startMs: row.start_time.getTime(), endMs: endMs ?? openEndMs };
    const window = { startMs: plan.minTs, endMs: endMs ?? plan.maxTs };
    if (row.equipment_id !== null) {
      await lockEquipmentForWindows(client, payload.organization_id, row.equipment_id);
      const other = await findOverlappingUnitOperation(client, {
        organizationId: payload.organization_id, equipmentId: row.equipment_id, startMs: window.startMs, endMs: window.endMs, excludeId: payload.unit_operation_id,
      });
      if (other) throw new WindowTakenError(UNIT_OPERATION_WINDOW_MESSAGES.overlapsOnUpload(overlapMessage(other)));
    }
    await setUnitOperationWindow(client, payload.organization_id, payload.unit_operation_id, window);
    return window;
  });
}

function rangeOf(payload: CsvUploadPayload, plan: CsvPlan) {
  return {
    organizationId: payload.organization_id,
    instrumentIds: [...new Set(plan.columns.map((column) => column.instrumentId))],
    startMs: plan.minTs,
    endMs: plan.maxTs,
  };
}

/**
 * Reads the file on a staging thread and inserts its batches into the staging table, committing the
 * resume point after each; runs the pass once more with row versions if the file needs them.
 */
async function stageAll(context: WorkerContext, payload: CsvUploadPayload, request: CsvRequest, table: string, from: StagingCheckpoint | null): Promise<PublishCheckpoint> {
  const stage = async (resumeFrom: StagingCheckpoint | null, versioned: boolean): Promise<CsvPlan> => {
    if (!resumeFrom) {
      await dropStagingTable(context.clickhouse, table);
      await createStagingTable(context.clickhouse, table, { organizationId: payload.organization_id, sharedVersion: pointVersion(payload.version_seq, 0) });
    }
    let progressWrites: Promise<void> = Promise.resolve();
    return stageInThread({
      filePath: payload.file_path, mapping: request.mapping, startMs: request.start_ms, endMs: request.end_ms, versionSeq: payload.version_seq,
      timeZone: request.time_zone ?? request.mapping.time_zone ?? 'UTC', timeZoneSource: request.time_zone_source ?? 'mapping',
      maxRows: context.env.CSV_MAX_ROWS, batchPoints: INSERT_BATCH_POINTS, from: resumeFrom, versioned,
      duplicates: duplicatePolicy(request), missingValues: request.missing_values,
      maxColumns: context.env.CSV_MAX_COLUMNS, maxLineBytes: context.env.CSV_MAX_LINE_BYTES,
    }, {
      async batch(chunks, _points, checkpoint) {
        await insertStaged(context.clickhouse, table, Readable.from(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length)), { objectMode: false }), versioned);
        if (checkpoint) await updateProgress(context.pg, payload.job_id, { points_written: checkpoint.plan.points }, checkpoint);
      },
      progress(bytesRead, rowsRead) {
        progressWrites = progressWrites
          .then(() => updateProgress(context.pg, payload.job_id, { bytes_read: bytesRead, rows_read: rowsRead }))
          .catch((error: unknown) => context.logger.warn({ err: error, jobId: payload.job_id }, 'progress update failed'));
      },
    }, context.shutdown);
  };
  let plan: CsvPlan;
  let resumed = from !== null;
  let versioned = from?.versioned ?? false;
  try {
    plan = await stage(from, versioned);
  } catch (error) {
    if (!(error instanceof NeedsRowVersions)) throw error;
    context.logger.info({ jobId: payload.job_id }, 'timestamps repeat or go back: staging again with a version per row');
    versioned = true;
    plan = await stage(null, true);
    resumed = false;
  }
  const duplicates = await summariseDuplicates(context, plan, table, duplicatePolicy(request), versioned);
  if (duplicates.policy === 'refuse' && duplicates.keys > 0) throw new DuplicatesRefused(duplicates);
  const checkpoint: PublishCheckpoint = { phase: 'publish', plan, resumed, duplicates, tombstoned: false, attaching: false, attached: false };
  await updateProgress(context.pg, payload.job_id, {
    bytes_read: request.bytes, rows_read: plan.dataRows, rows_skipped: totalSkippedRows(skippedCounts(plan)), points_written: pointsStored(checkpoint),
  }, checkpoint);
  return checkpoint;
}

export async function processCsvUpload(context: WorkerContext, payload: CsvUploadPayload, job: Job): Promise<void> {
  // Two runs of one upload at once would drop and attach each other's staging table.
  return withJobLease(context.pg, payload.job_id, () => processCsvUploadAlone(context, payload, job));
}

async function processCsvUploadAlone(context: WorkerContext, payload: CsvUploadPayload, _job: Job): Promise<void> {
  const record = await startJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const parsed = csvRequestSchema.safeParse(record.request);
  if (!parsed.success) throw new PermanentJobError('The record of this upload is unreadable, so it was not written; please upload the file again.');
  const request = parsed.data;
  const table = stagingTableName(payload.job_id);
  try {
    const started = Date.now();
    const saved = record.checkpoint as Checkpoint | null;
    let checkpoint: PublishCheckpoint = saved?.phase === 'publish'
      ? saved
      : await stageAll(context, payload, request, table, saved?.phase === 'staging' ? saved : null);
    if (!checkpoint.window) {
      checkpoint = { ...checkpoint, window: await claimWindow(context, payload, request, checkpoint.plan) };
      await updateProgress(context.pg, payload.job_id, {}, checkpoint);
    }
    const staged = Date.now();
    checkpoint = await publish(context, payload, request, table, checkpoint);
    const published = Date.now();

    const { plan } = checkpoint;
    const points = pointsStored(checkpoint);
    const flagged = flaggedCells(plan);
    const duplicates = checkpoint.duplicates ?? { policy: duplicatePolicy(request), keys: 0, rows_dropped: 0, first: null };
    const range = rangeOf(payload, plan);
    await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
    const replaced = request.mapping.replace_existing ? replacedRange(payload, checkpoint) : null;
    const rollupRange = replaced
      ? { ...range, startMs: Math.min(range.startMs, replaced.startMs), endMs: Math.max(range.endMs, replaced.endMs) }
      : range;
    await recomputeRollups(context.clickhouse, context.pg, [{ range: rollupRange, points }]);
    const warnings = await setAliases(context, payload.organization_id, plan, plan.keyIndex === -1 ? [] : keyColumnsOf(request.mapping));
    context.logger.info({
      jobId: payload.job_id, points, stageMs: staged - started, publishMs: published - staged, rollupMs: Date.now() - published,
    }, 'csv upload written');
    const skippedByReason = skippedCounts(plan);
    const skipped = totalSkippedRows(skippedByReason);
    const progress: Partial<IngestProgress> = {
      bytes_total: request.bytes, bytes_read: request.bytes, rows_read: plan.dataRows, rows_skipped: skipped, points_written: points,
    };
    await markCompleted(context.pg, payload.job_id, {
      message: uploadSuccessMessage(range.instrumentIds.length, points, request.mapping.replace_existing),
      points_written: points,
      flagged_cells: flagged,
      flagged_message: flaggedCellsMessage(flagged),
      duplicates,
      duplicates_message: duplicatesKeptMessage(duplicates),
      rows_read: plan.dataRows,
      rows_valid: plan.validRows,
      rows_skipped: skipped,
      rows_skipped_bad_timestamp: plan.skippedBadTimestamp,
      rows_skipped_out_of_range: plan.skippedOutOfRange,
      rows_skipped_empty: plan.skippedEmpty,
      rows_skipped_unselected_key: plan.skippedUnselectedKey,
      rows_skipped_filtered: plan.skippedFiltered ?? 0,
      rows_filtered: plan.filtered ?? [],
      filtered_message: rowFiltersMessage(plan.filtered ?? []),
      skipped_message: skippedRowsMessage(skippedByReason),
      points_filled: plan.filledPoints,
      instruments: range.instrumentIds.length,
      start_time: new Date(plan.minTs).toISOString(),
      end_time: new Date(plan.maxTs).toISOString(),
      replaced: request.mapping.replace_existing,
      replaced_range: replaced ? { start_time: new Date(replaced.startMs).toISOString(), end_time: new Date(replaced.endMs).toISOString() } : null,
      points_removed: checkpoint.pointsRemoved ?? 0,
      timestamp_format: plan.detection?.format ?? `elapsed ${request.mapping.elapsed_unit}`,
      timestamp_confidence: plan.detection?.confidence ?? 1,
      time_zone: request.mapping.timestamp_mode === 'elapsed' ? null : plan.timeZone,
      time_zone_source: request.mapping.timestamp_mode === 'elapsed' ? null : plan.timeZoneSource,
      station_utc_offset_minutes: plan.stationOffsetMinutes,
      notice: plan.detection && isLowConfidence(plan.detection) ? lowDateConfidenceMessage(plan.detection.confidence) : null,
      warnings,
    }, progress, request.mapping.close_open_end && plan.points > 0
      ? (client) => closeWindowAtLastReading(client, {
        jobId: payload.job_id, organizationId: payload.organization_id, unitOperationId: payload.unit_operation_id, lastReadingMs: plan.maxTs,
      })
      : undefined);
    // Completed (the window closed with it): reads see the new points and no longer the replaced ones.
    const announced: PointsStoredEntry[] = [];
    if (replaced) {
      announced.push({
        organizationId: replaced.organizationId, instrumentIds: replaced.instrumentIds, fromMs: replaced.startMs, toMs: replaced.endMs, kind: 'deletion', jobIds: [payload.job_id], points: checkpoint.pointsRemoved ?? 0,
      });
    }
    if (points > 0) {
      announced.push({
        organizationId: range.organizationId, instrumentIds: range.instrumentIds, fromMs: range.startMs, toMs: range.endMs, kind: 'points', jobIds: [payload.job_id], points,
      });
    }
    await announceAllPointsStored(context.redis, context.env.QUEUE_PREFIX, announced, context.logger);
    await rm(payload.file_path, { force: true });
  } catch (caught) {
    const error = caught instanceof CsvRejected ? new PermanentJobError(caught.message) : caught;
    if (error instanceof PermanentJobError) {
      // The file goes only once the failure (and its audit event) committed: should that commit fail,
      // the retry reads the file again and reaches the same verdict.
      const result = error instanceof WindowTakenError ? { conflict: true }
        : error instanceof DuplicatesRefused ? { duplicates: error.summary, duplicates_message: error.message } : undefined;
      await markFailed(context.pg, payload.job_id, error.message, result);
      await discardCsvUpload(context, payload);
    }
    throw error;
  }
}

/** Removes what a failed upload leaves behind: its staging table and its spooled file. */
export async function discardCsvUpload(context: WorkerContext, payload: CsvUploadPayload): Promise<void> {
  const table = stagingTableName(payload.job_id);
  await dropStagingTable(context.clickhouse, table).catch((error: unknown) => {
    context.logger.warn({ err: error, table }, 'staging table of a failed upload could not be dropped');
  });
  await rm(payload.file_path, { force: true });
}
