/**
 * The console's side of exports: the request a choice in the Export dialog makes, the download of its
 * answer as a file (with the session's bearer token, so a plain link cannot do it), and the export jobs
 * that larger exports and the organisation archive become (followed to their end, then downloaded).
 */
import { parseBucket } from '@bioprocess/shared/timeseries';
import { wallTimeToEpochMs, wallTimeToIso } from '../dates/date-time-format.ts';
import { z } from 'zod';
import {
  exportJobStatusSchema, isExportJobFinished, type ExportJobKind, type ExportJobStatus, type TimeSeriesExportFormat,
} from '@bioprocess/shared/exports';
import { getToken } from '../auth/session-store.ts';
import { readJsonBody, serverErrorOf } from '../api/client.ts';
import { watchJob } from '../api/job-events.ts';

/** What an export can cover: a run (every unit operation) or one unit operation. */
export interface ExportScopeOption {
  key: string;
  label: string;
  runId?: number;
  unitOperationId?: number;
  instruments: Array<{ id: number; name: string; unit: string | null }>;
  /** The instruments were narrowed to those holding data: the request always names them. */
  onlyListed?: boolean;
  /** With onlyListed: every instrument of the equipment (those with data first), offered behind a switch. */
  allInstruments?: Array<{ id: number; name: string; unit: string | null }>;
}

interface InstrumentLike { id: number; name: string; unit: string | null; equipmentId: number }

function instrumentsOn(equipmentIds: ReadonlyArray<number | null>, instruments: readonly InstrumentLike[]): ExportScopeOption['instruments'] {
  return instruments.filter((instrument) => equipmentIds.includes(instrument.equipmentId))
    .map(({ id, name, unit }) => ({ id, name, unit }));
}

/** One unit operation: its equipment's instruments. */
/**
 * One unit operation: the instruments of its equipment, or only those holding readings in its window
 * when known (`withData`), named explicitly in the request so a wide CSV has no empty columns.
 */
export function unitOperationScope(
  operation: { id: number; equipmentId: number | null }, label: string, instruments: readonly InstrumentLike[], withData: ReadonlySet<number> | null = null,
): ExportScopeOption {
  const onEquipment = instrumentsOn([operation.equipmentId], instruments);
  if (!withData) return { key: `unit-operation-${operation.id}`, label, unitOperationId: operation.id, instruments: onEquipment };
  const holding = onEquipment.filter((instrument) => withData.has(instrument.id));
  return {
    key: `unit-operation-${operation.id}`, label, unitOperationId: operation.id, onlyListed: true,
    instruments: holding, allInstruments: [...holding, ...onEquipment.filter((instrument) => !withData.has(instrument.id))],
  };
}

/** A whole run: the instruments of every unit operation's equipment. */
export function runScope(run: { id: number; name: string }, operations: ReadonlyArray<{ equipmentId: number | null }>, instruments: readonly InstrumentLike[]): ExportScopeOption {
  return { key: `run-${run.id}`, label: `Run ${run.name} (every unit operation)`, runId: run.id, instruments: instrumentsOn(operations.map((operation) => operation.equipmentId), instruments) };
}

export interface ExportChoice {
  scope: ExportScopeOption;
  /** Ids of the chosen instruments; all of the scope's when every one is chosen. */
  instrumentIds: number[];
  /** `datetime-local` values in the browser's zone; empty: the whole unit operation. */
  start: string;
  end: string;
  format: TimeSeriesExportFormat;
  /** Empty: raw readings; else a bucket width such as `1m`. */
  bucket: string;
}

export const EXPORT_FORMAT_LABELS: Record<TimeSeriesExportFormat, string> = {
  'csv-long': 'CSV long (one row per reading)',
  'csv-wide': 'CSV wide (one column per instrument)',
  xlsx: 'Excel workbook (a sheet per unit operation)',
};

/** The problem with a choice, or null when it can be sent. */
export function exportChoiceProblem(choice: ExportChoice): string | null {
  if (choice.instrumentIds.length === 0) return 'Choose at least one instrument.';
  if (choice.bucket.trim() !== '' && parseBucket(choice.bucket) === null) return 'The bucket width must look like 10s, 5m or 1h.';
  if (choice.start && choice.end && wallTimeToEpochMs(choice.end) < wallTimeToEpochMs(choice.start)) return 'End time must be after start time.';
  return null;
}

/** The export endpoint's path and query for a choice. */
export function timeSeriesExportPath(choice: ExportChoice): string {
  const query = new URLSearchParams();
  if (choice.scope.unitOperationId !== undefined) query.set('unit_operation_id', String(choice.scope.unitOperationId));
  else if (choice.scope.runId !== undefined) query.set('run_id', String(choice.scope.runId));
  if (choice.scope.onlyListed || choice.instrumentIds.length < choice.scope.instruments.length) query.set('instrument_ids', choice.instrumentIds.join(','));
  const start = choice.start ? wallTimeToIso(choice.start) : null;
  const end = choice.end ? wallTimeToIso(choice.end) : null;
  if (start) query.set('start_time', start);
  if (end) query.set('end_time', end);
  query.set('format', choice.format);
  if (choice.bucket.trim()) query.set('bucket', choice.bucket.trim());
  return `/api/v1/exports/time-series?${query.toString()}`;
}

/** The file name the server chose (Content-Disposition), else `fallback`. */
function fileNameOf(response: Response, fallback: string): string {
  const match = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '');
  return match?.[1] ?? fallback;
}

/** What asking for an export gave: the file (saved), or an export job that writes it (too large to stream, or the archive). */
export type ExportOutcome = { kind: 'downloaded' } | { kind: 'job'; job: ExportJobStatus };

function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  // Revoked later: some browsers read the blob after the click handler returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Asks for an export: a file answer is saved through the browser, a 202 answers the export job to
 * follow; throws with the server's message when refused.
 */
export async function requestExport(path: string, fallbackName: string, method: 'GET' | 'POST' = 'GET'): Promise<ExportOutcome> {
  const response = await fetch(path, { method, headers: { Authorization: `Bearer ${getToken() ?? ''}` } });
  if (!response.ok) {
    throw new Error(serverErrorOf(await readJsonBody(response)) ?? `The export answered ${response.status}`);
  }
  if (response.status === 202) return { kind: 'job', job: exportJobStatusSchema.parse(await response.json()) };
  save(await response.blob(), fileNameOf(response, fallbackName));
  return { kind: 'downloaded' };
}

/** Fetches an export that always streams (records) and saves it through the browser. */
export async function downloadExport(path: string, fallbackName: string): Promise<void> {
  const outcome = await requestExport(path, fallbackName);
  if (outcome.kind === 'job') throw new Error('The export was queued as a job; follow it from the Export dialog.');
}

/** Follows an export job to its end (completed, failed or expired), reporting its progress. */
export function watchExportJob(jobId: string, onUpdate: (status: ExportJobStatus) => void, signal?: AbortSignal): Promise<ExportJobStatus> {
  return watchJob({
    url: `/api/v1/export-jobs/${encodeURIComponent(jobId)}`, schema: exportJobStatusSchema,
    finished: (status) => isExportJobFinished(status.state), readFailure: 'Failed to read the export',
  }, onUpdate, signal);
}

/** Saves the file of a completed export job. */
export async function downloadExportJob(job: ExportJobStatus): Promise<void> {
  if (!job.download_url) throw new Error('The export has no file to download.');
  const outcome = await requestExport(job.download_url, job.file_name ?? 'export');
  if (outcome.kind !== 'downloaded') throw new Error('The export is not ready yet.');
}

/**
 * The caller's recent export jobs, newest first (an admin's: the organisation's), kept in the wire
 * shape the progress stream and the download use.
 */
export async function fetchExportJobs(options: { kind?: ExportJobKind; limit: number }, signal?: AbortSignal): Promise<ExportJobStatus[]> {
  const query = new URLSearchParams({ limit: String(options.limit) });
  if (options.kind) query.set('kind', options.kind);
  const response = await fetch(`/api/v1/export-jobs?${query.toString()}`, { headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'application/json' }, signal });
  const body = await readJsonBody(response);
  if (!response.ok) throw new Error(serverErrorOf(body) ?? `Failed to read the recent exports (${response.status})`);
  return z.array(exportJobStatusSchema).parse(body);
}
