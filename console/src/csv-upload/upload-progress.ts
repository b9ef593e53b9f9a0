/** The progress bar's text and value for each phase of an upload: sending the file, then the ingest job. */
import type { IngestJobStatus } from '@bioprocess/shared/timeseries';
import { readCsvJobResult } from '@bioprocess/shared/ingest/csv-result';
import { formatCount } from '../components/count-format.ts';

export interface UploadState {
  phase: 'uploading' | 'processing' | 'done' | 'failed';
  sent: number;
  total: number;
  job: IngestJobStatus | null;
}

export interface ProgressView {
  title: string;
  detail: string;
  /** What the job did not store as written: flagged cells (stored as missing) and rows sharing a time. */
  notes: string[];
  /** 0..1, or undefined for an indeterminate bar. */
  value: number | undefined;
  intent: 'primary' | 'success' | 'danger';
  animate: boolean;
}

const count = formatCount;

export function describeProgress(upload: UploadState): ProgressView {
  const job = upload.job;
  const rowsAndPoints = job ? `${count(job.progress.rows_read)} rows read · ${count(job.progress.points_written)} points written` : '';
  if (upload.phase === 'uploading') {
    const share = upload.total > 0 ? upload.sent / upload.total : 0;
    return { title: 'Uploading file...', detail: `${Math.round(share * 100)}% sent`, notes: [], value: share, intent: 'primary', animate: true };
  }
  if (upload.phase === 'processing') {
    const total = job?.progress.bytes_total ?? 0;
    const value = job && total > 0 ? job.progress.bytes_read / total : undefined;
    return { title: job?.state === 'queued' || !job ? 'Waiting for the server...' : 'Importing data...', detail: rowsAndPoints, notes: [], value, intent: 'primary', animate: true };
  }
  if (upload.phase === 'done') {
    // A count of skipped rows always comes with its reasons (the job's result says them).
    const reasons = typeof job?.result?.skipped_message === 'string' ? job.result.skipped_message : null;
    const skipped = job && job.progress.rows_skipped > 0 ? ` · ${reasons ?? `${count(job.progress.rows_skipped)} rows skipped`}` : '';
    return { title: 'Import complete', detail: `${rowsAndPoints}${skipped}`, notes: resultNotes(job), value: 1, intent: 'success', animate: false };
  }
  return { title: 'Import failed', detail: job?.error ?? rowsAndPoints, notes: [], value: 1, intent: 'danger', animate: false };
}

/** The job's account of flagged cells, duplicate times and rows left out by the row filters, as the server worded it. */
export function resultNotes(job: IngestJobStatus | null): string[] {
  const result = job ? readCsvJobResult(job.result) : null;
  if (!result) return [];
  return [result.flagged_message, result.duplicates_message, result.filtered_message].filter((note): note is string => typeof note === 'string' && note !== '');
}
