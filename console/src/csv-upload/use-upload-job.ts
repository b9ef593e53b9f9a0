/**
 * The upload job of the CSV section: sends the file, follows the ingest job to its end with the
 * progress bar's state, and tells the user the outcome (the success toast with skipped rows and
 * notices, or the failure toast). A failure throws after its toast, so the dialog keeps the user.
 */
import { useCallback, useState } from 'react';
import { CSV_MESSAGES, CSV_TOAST_TITLES, skippedRowsMessage, uploadSuccessMessage } from '@bioprocess/shared/csv/index';
import type { CsvMapping, IngestJobStatus } from '@bioprocess/shared/timeseries';
import { ApiError } from '../api/client.ts';
import { showToast, type ToastInput } from '../components/toaster.ts';
import { watchIngestJob, type UploadProgressEvent } from './upload-client.ts';
import { resultNotes, type UploadState } from './upload-progress.ts';
import { formatCount } from '../components/count-format.ts';

/** How long the finished progress bar stays visible before the dialog closes. */
const DONE_LINGER_MS = 900;

/** Posts the file with its mapping, reporting bytes sent; answers the ingest job's id. */
export type SendUpload = (file: File, mapping: CsvMapping, onProgress: (event: UploadProgressEvent) => void) => Promise<string>;

/** An upload the server rejected; its message was shown already. */
class UploadFailed extends Error {}

export interface UploadJob {
  /** The progress bar's state; null before an upload starts. */
  upload: UploadState | null;
  /** Sends the file and follows its job to the end; throws, after the toast, when it fails. */
  run: (file: File, mapping: CsvMapping, send: SendUpload) => Promise<void>;
  /** Forgets the last upload (a new file was chosen or the file removed). */
  clear: () => void;
}

export function useUploadJob(): UploadJob {
  const [upload, setUpload] = useState<UploadState | null>(null);

  const run = useCallback(async (file: File, mapping: CsvMapping, send: SendUpload) => {
    const columnCount = mapping.columns.length;
    setUpload({ phase: 'uploading', sent: 0, total: file.size, job: null });
    try {
      const jobId = await send(file, mapping,
        (event) => setUpload({ phase: 'uploading', sent: event.loaded, total: event.total, job: null }));
      setUpload((u) => ({ phase: 'processing', sent: u?.total ?? 0, total: u?.total ?? 0, job: null }));
      const finished = await watchIngestJob(jobId, (job: IngestJobStatus) => setUpload((u) => ({
        phase: job.state === 'completed' ? 'done' : job.state === 'failed' ? 'failed' : 'processing',
        sent: u?.total ?? 0, total: u?.total ?? 0, job,
      })));
      if (finished.state === 'failed') {
        showToast({ title: CSV_TOAST_TITLES.uploadFailed, message: finished.error || CSV_MESSAGES.uploadFailedFallback, intent: 'danger' });
        throw new UploadFailed(finished.error ?? CSV_MESSAGES.uploadFailedFallback);
      }
      const summary = typeof finished.result?.message === 'string'
        ? finished.result.message
        : uploadSuccessMessage(columnCount, finished.progress.points_written);
      const notice = [typeof finished.result?.notice === 'string' ? finished.result.notice : null, ...resultNotes(finished)]
        .filter((text) => text !== null).map((text) => ` ${text}`).join('');
      const skipped = finished.progress.rows_skipped > 0 ? ` ${skippedRowsText(finished)}` : '';
      // The finished bar stays visible a moment; the toast is queued last so it follows the dialog's own.
      await new Promise((resolve) => setTimeout(resolve, DONE_LINGER_MS));
      toastAfterDialog({ title: CSV_TOAST_TITLES.uploadSucceeded, message: `${summary}${skipped}${notice}`, intent: 'success' });
    } catch (error) {
      if (error instanceof UploadFailed) throw error;
      console.error('CSV upload failed', error);
      setUpload((u) => (u ? { ...u, phase: 'failed' } : u));
      if (error instanceof ApiError && error.status === 429) {
        showToast({ title: CSV_TOAST_TITLES.rateLimited, message: error.message, intent: 'danger' });
      } else {
        showToast({ title: CSV_TOAST_TITLES.uploadFailed, message: error instanceof Error && error.message ? error.message : CSV_MESSAGES.uploadFailedFallback, intent: 'danger' });
      }
      throw error;
    }
  }, []);

  const clear = useCallback(() => setUpload(null), []);
  return { upload, run, clear };
}

/** Shown after the dialog's own success toast (one toast at a time: the upload's outcome is the one to read). */
function toastAfterDialog(toast: ToastInput): void {
  setTimeout(() => showToast(toast), 0);
}

/** The toast's account of skipped rows, with their reasons. */
function skippedRowsText(job: IngestJobStatus): string {
  const result = job.result ?? {};
  if (typeof result.skipped_message === 'string') return result.skipped_message;
  const count = (key: string) => (typeof result[key] === 'number' ? result[key] : 0);
  return skippedRowsMessage({
    badTimestamp: count('rows_skipped_bad_timestamp'), outsideWindow: count('rows_skipped_out_of_range'),
    empty: count('rows_skipped_empty'), unselectedKey: count('rows_skipped_unselected_key'),
  }) ?? `${formatCount(job.progress.rows_skipped)} row(s) skipped.`;
}
