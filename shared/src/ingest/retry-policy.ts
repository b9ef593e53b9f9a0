/**
 * How ingest jobs are retried, for the api that queues them, the ingest-worker's reconciler and
 * sweeper that queue them again, and the worker that runs them:
 * - a failure retrying cannot fix (a rejected file, a record that vanished) fails the job at once;
 * - a transient one (ClickHouse or PostgreSQL unreachable, ClickHouse short of memory or parts) is
 *   retried with a back-off doubling from 0.5 s to INGEST_BACKOFF_MAX_MS, bounded in time rather than
 *   in attempts: once the job has been failing so for INGEST_RETRY_MINUTES, counted in its row from its
 *   first such failure since it last made progress, it fails with a message saying what to send again;
 * - an unclassified one (a bug, malformed SQL) is retried a few times, then fails the job;
 * - a job no live worker drives for INGEST_RETRY_MINUTES is failed by the sweeper.
 */
import { INGEST_JOBS } from '../queues.ts';
import { cappedExponentialDelay } from '../capped-backoff.ts';
import { isPostgresUnreachable } from '../server/postgres.ts';

/** The BullMQ back-off type of ingest deliveries; the worker computes its delay (ingestBackoffMs). */
export const INGEST_BACKOFF_TYPE = 'capped-exponential';

/**
 * The options of every ingest delivery: transient failures end by time (the worker fails the job after
 * INGEST_RETRY_MINUTES), so the attempts only need to outnumber that. Completed jobs leave Redis;
 * failed ones stay for inspection, bounded.
 */
export const INGEST_JOB_OPTIONS = {
  attempts: 1_000_000,
  backoff: { type: INGEST_BACKOFF_TYPE },
  removeOnComplete: true,
  removeOnFail: 1_000,
};

/** The first pause after a failed attempt; it doubles at each attempt. */
export const INGEST_BACKOFF_BASE_MS = 500;

/** Pause before the next attempt: 0.5 s doubling to maxMs (INGEST_BACKOFF_MAX_MS, 30 s by default). */
export function ingestBackoffMs(attemptsMade: number, maxMs = 30_000): number {
  return cappedExponentialDelay(attemptsMade, INGEST_BACKOFF_BASE_MS, maxMs);
}

/** Attempts of a job failing for an unclassified reason before it fails for good. */
export const UNCLASSIFIED_FAILURE_ATTEMPTS = 5;

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P03', '08006', '08001', '53300']);

/** Whether a failure may pass by itself: a service unreachable, a timeout, ClickHouse under pressure. */
export function isTransientFailure(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  if ((code && TRANSIENT_CODES.has(code)) || isPostgresUnreachable(error)) return true;
  const message = error instanceof Error ? error.message : String(error);
  // ClickHouse under memory pressure or too many parts: worth retrying later.
  return /timeout|socket hang up|ECONNREFUSED|Too many parts|MEMORY_LIMIT|Connection terminated|connect/i.test(message)
    || CLUSTER_TRANSIENT.test(message);
}

/**
 * A ClickHouse cluster's passing states: ZooKeeper without a majority or a session (replicated tables
 * read-only meanwhile), a quorum insert refused while a replica is down or while the shard's previous
 * quorum insert is unconfirmed (ClickHouse 18.16 confirms one at a time), every replica of a shard
 * unreachable, a server that is still loading its tables after a restart.
 */
const CLUSTER_TRANSIENT = /readonly mode|read-only mode|quorum|Session expired|ZooKeeper|Coordination|alive replicas|NO_REPLICA_HAS_PART|Replica .* is not active|ALL_CONNECTION_TRIES_FAILED|is currently (being )?(dropped|initialized)/i;

/** Whether a job that has been failing transiently for failingSeconds has used up its retry time. */
export function retryTimeExhausted(failingSeconds: number, retryMinutes: number): boolean {
  return failingSeconds > retryMinutes * 60;
}

/** What a user reads on a job that kept failing for a reason that may pass until its retries ran out. */
export function retriesExhaustedMessage(jobName: string, minutes: number, error: unknown): string {
  const what = jobName === INGEST_JOBS.csv ? 'upload the file again' : jobName === INGEST_JOBS.deletion ? 'request the deletion again' : 'post the data again';
  const cause = error instanceof Error ? error.message : String(error);
  const span = minutes >= 1 ? `${Math.round(minutes)} minute${Math.round(minutes) === 1 ? '' : 's'}` : `${Math.round(minutes * 60)} seconds`;
  return `Nothing was written: the time-series database or the job database could not be reached for ${span} (${cause}). `
    + `Once the platform's health page shows every service up, ${what}.`;
}

/** What a user reads on a job the sweeper failed because no worker took it up again within the retry time. */
export function stuckJobMessage(minutes: number): string {
  return `This job stopped before it finished and no worker could take it up again for ${Math.round(minutes)} minutes, `
    + 'so part of it may be missing. Please send it again (data sent twice is stored once).';
}
