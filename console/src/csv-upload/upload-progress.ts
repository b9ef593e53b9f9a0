/** The progress bar's text and value for each phase of an upload: sending the file, then the ingest job. */
import type { IngestJobStatus } from '@bioprocess/shared/timeseries';
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
    return { title: 'Uploading file...', detail: `${Math.round(share * 100)}% sent`, value: share, intent: 'primary', animate: true };
  }
  if (upload.phase === 'processing') {
    const total = job?.progress.bytes_total ?? 0;
    const value = job && total > 0 ? job.progress.bytes_read / total : undefined;
    return { title: job?.state === 'queued' || !job ? 'Waiting for the server...' : 'Importing data...', detail: rowsAndPoints, value, intent: 'primary', animate: true };
  }
  if (upload.phase === 'done') {
    // A count of skipped rows always comes with its reasons (the job's result says them).
    const reasons = typeof job?.result?.skipped_message === 'string' ? job.result.skipped_message : null;
    const skipped = job && job.progress.rows_skipped > 0 ? ` · ${reasons ?? `${count(job.progress.rows_skipped)} rows skipped`}` : '';
    return { title: 'Import complete', detail: `${rowsAndPoints}${skipped}`, value: 1, intent: 'success', animate: false };
  }
  return { title: 'Import failed', detail: job?.error ?? rowsAndPoints, value: 1, intent: 'danger', animate: false };
}
