/**
 * An export job in a dialog or a settings section: a progress bar while the export-worker writes the
 * file, then the file with its Download button (the file is kept for a while, then removed), or the
 * reason it failed. useExportJob follows the job's progress events until it ends.
 */
import { Button, Callout, Intent, ProgressBar } from '@blueprintjs/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ExportJobStatus } from '@bioprocess/shared/exports';
import { showToast } from '../components/toaster.ts';
import { downloadExportJob, watchExportJob } from './export-request.ts';
import { formatCount } from '../components/count-format.ts';
import { formatDateWithZone } from '../dates/date-time-format.ts';

export interface ExportJobState {
  job: ExportJobStatus | null;
  /** Following the job failed (the job itself may still run). */
  error: string | null;
  /** True while the job is queued or running. */
  running: boolean;
  follow(job: ExportJobStatus): void;
  /** Shows a job as it is, without following it (a finished one). */
  show(job: ExportJobStatus): void;
  reset(): void;
}

export function useExportJob(): ExportJobState {
  const [job, setJob] = useState<ExportJobStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const following = useRef<AbortController | null>(null);
  const reset = useCallback(() => {
    following.current?.abort();
    following.current = null;
    setJob(null);
    setError(null);
  }, []);
  const follow = useCallback((first: ExportJobStatus) => {
    following.current?.abort();
    const controller = new AbortController();
    following.current = controller;
    setJob(first);
    setError(null);
    watchExportJob(first.id, (status) => { if (!controller.signal.aborted) setJob(status); }, controller.signal)
      .catch((cause: unknown) => {
        if (!controller.signal.aborted) setError(cause instanceof Error ? cause.message : 'The export could not be followed.');
      });
  }, []);
  const show = useCallback((status: ExportJobStatus) => {
    following.current?.abort();
    following.current = null;
    setJob(status);
    setError(null);
  }, []);
  useEffect(() => () => following.current?.abort(), []);
  const running = job !== null && error === null && (job.state === 'queued' || job.state === 'running');
  return { job, error, running, follow, show, reset };
}

function sizeText(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function progressText(job: ExportJobStatus): string {
  if (job.state === 'queued') return 'Waiting for the export to start...';
  const { progress } = job;
  if (job.kind === 'organization_archive') return `Writing the archive: ${progress.files_done} of ${progress.files_total || '?'} files`;
  return `Writing the file: ${formatCount(progress.points_done)} of ${formatCount(progress.points_total)} points`;
}

/** One export job's progress, file or failure; `testId` names its callout (several may share a page). */
export function ExportJobProgress({ state, testId = 'export-job' }: { state: ExportJobState; testId?: string }) {
  const [downloading, setDownloading] = useState(false);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const { job, error } = state;
  if (error) return <Callout intent={Intent.DANGER} title="Export failed" data-testid={testId}>{error}</Callout>;
  if (!job) return null;

  const download = async () => {
    setDownloading(true);
    setDownloadError(null);
    try {
      await downloadExportJob(job);
      showToast({ title: 'Export downloaded', intent: 'success' });
    } catch (cause) {
      setDownloadError(cause instanceof Error ? cause.message : 'The download failed.');
    } finally {
      setDownloading(false);
    }
  };

  switch (job.state) {
    case 'queued':
    case 'running':
      return (
        <Callout intent={Intent.PRIMARY} title="Preparing the export" data-testid={testId}>
          <p>This export is too large to download at once: it is written on the server, and can be downloaded here when ready.</p>
          {/* No value while queued: Blueprint then shows an indeterminate bar. */}
          <ProgressBar intent={Intent.PRIMARY} value={job.state === 'queued' ? undefined : job.fraction} aria-label="Export progress" />
          <p className="bp6-text-muted">{progressText(job)}</p>
        </Callout>
      );
    case 'completed':
      return (
        <Callout intent={Intent.SUCCESS} title="Export ready" data-testid={testId}>
          <p>
            {job.file_name} ({sizeText(job.bytes)})
            {job.expires_at ? `, kept until ${formatDateWithZone(job.expires_at)}` : ''}.
          </p>
          <ProgressBar intent={Intent.SUCCESS} value={1} stripes={false} animate={false} aria-label="Export progress" />
          <Button icon="download" intent={Intent.PRIMARY} text="Download" loading={downloading} onClick={() => void download()} />
          {downloadError ? <p className="bp6-text-muted" role="alert">{downloadError}</p> : null}
        </Callout>
      );
    case 'expired':
      return <Callout intent={Intent.WARNING} title="Export expired" data-testid={testId}>Its file was removed. Export again.</Callout>;
    case 'failed':
      return <Callout intent={Intent.DANGER} title="Export failed" data-testid={testId}>{job.error ?? 'The export failed.'}</Callout>;
  }
}
