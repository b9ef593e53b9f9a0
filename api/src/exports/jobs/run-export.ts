/**
 * Runs one export job: writes its file into EXPORT_DIR under `<id>.part`, flushes it to disk, renames
 * it to its final name and only then completes the row (with its audit event). A delivery that fails or
 * dies mid-way leaves at most a part file, which the next delivery overwrites and the sweep removes;
 * the download endpoint serves only completed rows. Progress (points or files done, bytes written) is
 * saved about once a second for the progress stream.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { syncToDisk } from '@bioprocess/shared/server/sync-to-disk';
import path from 'node:path';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { timeSeriesExportQuerySchema, type ExportJobProgress, type TimeSeriesExportQuery } from '@bioprocess/shared/exports';
import { EXPORT_JOB_MAX_ATTEMPTS } from '@bioprocess/shared/queues';
import { parseBucket } from '@bioprocess/shared/timeseries';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { HttpError } from '../../platform/http-error.ts';
import { resolveExportScope } from '../scope.ts';
import { awaitOwedRollups, ROLLUPS_OWED_MESSAGE } from '../../timeseries/rollup-backlog.ts';
import { csvLong, csvWide, type ExportTally } from '../csv-formats.ts';
import { xlsxStream } from '../xlsx.ts';
import { loadScopeSamples } from '../samples.ts';
import { organizationArchive, type ArchiveManifest } from '../archive.ts';
import { archiveFileName, CONTENT_TYPES, timeSeriesFileName, ZIP_CONTENT_TYPE } from '../file-names.ts';
import {
  attemptsExhaustedMessage, completeExportJob, failExportJob, noteExportAttemptFailed, startExportJob, updateExportProgress, type ExportJobRow,
} from './export-jobs.ts';

const PROGRESS_EVERY_MS = 1_000;

/** What a time-series export job stores as its request: the query as it arrived, and when it was accepted. */
export const storedTimeSeriesRequestSchema = z.object({
  query: z.record(z.string(), z.string()),
  /** The open end of a running unit operation, fixed when the request was accepted. */
  now_ms: z.number().int(),
  points: z.number().int().min(0),
  ip: z.string().nullable().optional(),
});

/** The query in its wire form (what timeSeriesExportQuerySchema parses), for the job row. */
export function wireQuery(query: TimeSeriesExportQuery): Record<string, string> {
  const wire: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    wire[key] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return wire;
}

export interface ExportRunContext {
  pg: Pool;
  clickhouse: ClickHouseClient;
  logger: Logger;
  exportDir: string;
  ttlHours: number;
  /** Aborted when the worker shuts down: the export stops and is delivered again later. */
  shutdown: AbortSignal;
}

/** A failure that another attempt cannot fix (the unit operation was deleted, the stored request is malformed). */
function isPermanent(error: unknown): boolean {
  return (error instanceof HttpError && error.statusCode < 500) || error instanceof z.ZodError;
}

export function partPathOf(exportDir: string, jobId: string): string {
  return path.join(exportDir, `${jobId}.part`);
}

interface Written {
  fileName: string;
  contentType: string;
  extension: string;
  rows: number;
  progress: Partial<ExportJobProgress>;
  audit: Record<string, unknown>;
}

/** Counts the bytes that pass. */
function byteCounter(): { stream: Transform; bytes: () => number } {
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
}

async function writeTimeSeries(context: ExportRunContext, job: ExportJobRow, output: Writable, report: (progress: Partial<ExportJobProgress>) => void): Promise<Written> {
  const stored = storedTimeSeriesRequestSchema.parse(job.request);
  const query = timeSeriesExportQuerySchema.parse(stored.query);
  const scope = await resolveExportScope(context.pg, job.organization_id, query, stored.now_ms);
  const bucketMs = query.bucket === undefined ? null : parseBucket(query.bucket);
  const tally: ExportTally = { rows: 0, points: 0 };
  const input = { clickhouse: context.clickhouse, organizationId: job.organization_id, scope, bucketMs, tally };
  const source = query.format === 'xlsx'
    ? xlsxStream(input, {
      exportedAt: job.created_at, user: job.requested_by, format: query.format, bucket: query.bucket ?? null,
      samples: await loadScopeSamples(context.pg, job.organization_id, scope),
    }, () => undefined)
    : Readable.from(query.format === 'csv-long' ? csvLong(input) : csvWide(input, query.elapsed === 'true'));
  const counter = byteCounter();
  const timer = setInterval(() => report({ points_done: tally.points, bytes_written: counter.bytes() }), PROGRESS_EVERY_MS);
  try {
    await pipeline(source, counter.stream, output, { signal: context.shutdown });
  } finally {
    clearInterval(timer);
  }
  return {
    fileName: timeSeriesFileName(scope, query.format, job.created_at),
    contentType: CONTENT_TYPES[query.format],
    extension: query.format === 'xlsx' ? 'xlsx' : 'csv',
    rows: tally.rows,
    progress: { points_total: stored.points, points_done: tally.points, bytes_written: counter.bytes() },
    audit: { points: tally.points },
  };
}

async function writeArchive(context: ExportRunContext, job: ExportJobRow, output: Writable, report: (progress: Partial<ExportJobProgress>) => void): Promise<Written> {
  const counter = byteCounter();
  let told!: (end: { manifest: ArchiveManifest; error: unknown }) => void;
  const ended = new Promise<{ manifest: ArchiveManifest; error: unknown }>((resolve) => { told = resolve; });
  const archive = organizationArchive({
    pg: context.pg, clickhouse: context.clickhouse, organizationId: job.organization_id, exportedBy: job.requested_by,
    onProgress: (progress) => report({ ...progress, bytes_written: counter.bytes() }),
  }, (manifest, error) => told({ manifest, error }));
  await pipeline(archive, counter.stream, output, { signal: context.shutdown });
  const { manifest, error } = await ended;
  if (error) throw error instanceof Error ? error : new Error(String(error));
  const files = manifest.files.length;
  return {
    fileName: archiveFileName(job.organization_id, job.created_at),
    contentType: ZIP_CONTENT_TYPE,
    extension: 'zip',
    rows: manifest.files.reduce((sum, file) => sum + file.rows, 0),
    progress: { files_done: files, files_total: files, bytes_written: counter.bytes() },
    audit: { files },
  };
}

/** Writes `part` durably (flushed to disk) with the job's content. */
async function writeFile(context: ExportRunContext, job: ExportJobRow, part: string): Promise<Written> {
  // Both kinds read readings partly from the rollups (figures of whole hours, windows planned from the
  // hourly rollups): those owed by posts answered before now are waited for, or a post is left out.
  if (!await awaitOwedRollups(context.pg, job.organization_id)) throw new Error(ROLLUPS_OWED_MESSAGE);
  let last: Partial<ExportJobProgress> | null = null;
  let saving = false;
  const report = (progress: Partial<ExportJobProgress>) => {
    last = { ...last, ...progress };
    if (saving) return;
    saving = true;
    const sent = last;
    updateExportProgress(context.pg, job.id, sent).catch((error: unknown) => context.logger.debug({ err: error, jobId: job.id }, 'export progress not saved'))
      .finally(() => { saving = false; });
  };
  const output = createWriteStream(part, { flags: 'w' });
  const written = job.kind === 'time_series' ? await writeTimeSeries(context, job, output, report) : await writeArchive(context, job, output, report);
  await syncToDisk(part);
  return written;
}

/** Runs the job's delivery; throws to have it delivered again (the row was told why). */
export async function runExportJob(context: ExportRunContext, jobId: string): Promise<'completed' | 'failed' | 'skipped'> {
  const job = await startExportJob(context.pg, jobId);
  if (!job) return 'skipped';
  if (job.attempts > EXPORT_JOB_MAX_ATTEMPTS) {
    await failExportJob(context.pg, jobId, attemptsExhaustedMessage(job.error));
    return 'failed';
  }
  await mkdir(context.exportDir, { recursive: true });
  const part = partPathOf(context.exportDir, jobId);
  try {
    const written = await writeFile(context, job, part);
    const finalPath = path.join(context.exportDir, `${jobId}.${written.extension}`);
    await rename(part, finalPath);
    const { size } = await stat(finalPath);
    const completed = await completeExportJob(context.pg, jobId, {
      fileName: written.fileName, filePath: finalPath, contentType: written.contentType, bytes: size, rows: written.rows,
      progress: written.progress, audit: written.audit,
    }, context.ttlHours);
    // Finished meanwhile by someone else (a duplicated delivery): this copy is not needed.
    if (!completed) await rm(finalPath, { force: true });
    return completed ? 'completed' : 'skipped';
  } catch (error) {
    await rm(part, { force: true }).catch(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    if (context.shutdown.aborted) {
      await noteExportAttemptFailed(context.pg, jobId, 'interrupted by a worker shutdown', { refund: true });
      throw error;
    }
    if (isPermanent(error)) {
      await failExportJob(context.pg, jobId, `The export failed: ${message}`);
      return 'failed';
    }
    if (job.attempts >= EXPORT_JOB_MAX_ATTEMPTS) {
      await failExportJob(context.pg, jobId, attemptsExhaustedMessage(message));
      return 'failed';
    }
    await noteExportAttemptFailed(context.pg, jobId, message);
    throw error;
  }
}
