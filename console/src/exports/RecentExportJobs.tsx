/**
 * Recent export jobs, newest first, each with its progress bar while it is written and its Download
 * once ready: what a page shows of exports started earlier, so an export outlives a reload or a closed
 * tab. The list comes from GET /api/v1/export-jobs (an admin's holds the organisation's jobs, anyone
 * else's the time-series exports they asked for); unfinished jobs are followed to their end.
 */
import { useCallback, useEffect } from 'react';
import useSWR from 'swr';
import { isExportJobFinished, type ExportJobKind, type ExportJobStatus } from '@bioprocess/shared/exports';
import { fetchExportJobs } from './export-request.ts';
import { ExportJobProgress, useExportJob } from './ExportJobProgress.tsx';
import { formatDateWithZone } from '../dates/date-time-format.ts';

export interface RecentExportJobs {
  jobs: ExportJobStatus[];
  /** True while a listed job is queued or running. */
  running: boolean;
  error: string | null;
  /** Reads the list again (after starting an export, or once a listed one finished). */
  refresh(): Promise<unknown>;
}

export function useRecentExportJobs(options: { kind?: ExportJobKind; limit: number; enabled?: boolean }): RecentExportJobs {
  const { kind, limit, enabled = true } = options;
  const { data, error, mutate } = useSWR(enabled ? ['export-jobs', kind ?? 'all', limit] : null, () => fetchExportJobs({ kind, limit }));
  const jobs = data ?? [];
  return {
    jobs,
    running: jobs.some((job) => !isExportJobFinished(job.state)),
    error: error instanceof Error ? error.message : null,
    refresh: useCallback(() => mutate(), [mutate]),
  };
}

function RecentExportJob({ job, onFinished, testId }: { job: ExportJobStatus; onFinished: () => unknown; testId?: string }) {
  const state = useExportJob();
  const { follow, show } = state;
  const unfinished = !isExportJobFinished(job.state);
  useEffect(() => {
    if (unfinished) follow(job);
    else show(job);
    // Followed once per id and state the list gave (not per list read): its progress arrives as events.
  }, [job.id, job.state, follow, show]);
  const ended = state.job !== null && state.job.id === job.id && isExportJobFinished(state.job.state);
  useEffect(() => {
    if (unfinished && ended) onFinished();
  }, [unfinished, ended, onFinished]);
  return (
    <li className="app-recent-export" data-testid="recent-export" data-export-id={job.id}>
      <p className="bp6-text-muted">
        Started {formatDateWithZone(job.created_at, 'dateTimeSeconds')} by {job.requested_by}
      </p>
      <ExportJobProgress state={state} testId={testId} />
    </li>
  );
}

export interface RecentExportJobListProps {
  recent: RecentExportJobs;
  title?: string;
  /** Left out of the list (the job the page already shows). */
  exceptId?: string | null;
  /** The test id of each job's callout (default `export-job`). */
  itemTestId?: string;
}

export function RecentExportJobList({ recent, title = 'Recent exports', exceptId = null, itemTestId }: RecentExportJobListProps) {
  const { error, refresh } = recent;
  const jobs = recent.jobs.filter((job) => job.id !== exceptId);
  if (error) return <p className="bp6-text-muted" role="alert">{error}</p>;
  if (jobs.length === 0) return null;
  return (
    <div className="app-recent-exports" data-testid="recent-exports">
      <h6 className="bp6-heading">{title}</h6>
      <ul className="bp6-list-unstyled">
        {jobs.map((job) => <RecentExportJob key={job.id} job={job} onFinished={refresh} testId={itemTestId} />)}
      </ul>
    </div>
  );
}
