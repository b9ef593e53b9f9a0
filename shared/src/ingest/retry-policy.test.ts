import { describe, expect, it } from 'vitest';
import { INGEST_JOBS } from '@bioprocess/shared/queues';
import {
  INGEST_JOB_OPTIONS, ingestBackoffMs, isTransientFailure, retriesExhaustedMessage, retryTimeExhausted, stuckJobMessage,
} from '@bioprocess/shared/ingest/retry-policy';

describe('ingest retry policy', () => {
  it('backs off from 0.5 s, doubling, to the configured longest pause', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((attempts) => ingestBackoffMs(attempts))).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(ingestBackoffMs(0)).toBe(500);
    expect(ingestBackoffMs(999_999)).toBe(30_000);
    expect([1, 2, 3].map((attempts) => ingestBackoffMs(attempts, 1_000))).toEqual([500, 1_000, 1_000]);
  });

  it('has deliveries enough to retry at the longest pause for far longer than any retry time', () => {
    const spanDays = (INGEST_JOB_OPTIONS.attempts * 100) / 86_400_000;
    expect(spanDays).toBeGreaterThan(1);
    expect(INGEST_JOB_OPTIONS.backoff.type).toBe('capped-exponential');
  });

  it('retries services that cannot be reached and ClickHouse under pressure, not wrong requests', () => {
    expect(isTransientFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientFailure(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(true);
    expect(isTransientFailure(new Error('Too many parts (300). Merges are processing significantly slower than inserts'))).toBe(true);
    expect(isTransientFailure(new Error('Memory limit (for query) exceeded: MEMORY_LIMIT_EXCEEDED'))).toBe(true);
    // A ClickHouse cluster while a server, a replica or ZooKeeper is away.
    expect(isTransientFailure(new Error('Table is in readonly mode'))).toBe(true);
    expect(isTransientFailure(new Error('Quorum for previous write has not been satisfied yet. Status: version: 1'))).toBe(true);
    expect(isTransientFailure(new Error('Number of alive replicas (1) is less than requested quorum (2).'))).toBe(true);
    expect(isTransientFailure(new Error('Coordination::Exception: Session expired'))).toBe(true);
    expect(isTransientFailure(new Error('Syntax error: failed at position 12'))).toBe(false);
    expect(isTransientFailure(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
  });

  it('ends retrying once the failures have lasted longer than the retry time', () => {
    expect(retryTimeExhausted(3_600, 60)).toBe(false);
    expect(retryTimeExhausted(3_601, 60)).toBe(true);
    expect(retryTimeExhausted(2, 0.05)).toBe(false);
    expect(retryTimeExhausted(4, 0.05)).toBe(true);
  });

  it('tells the user what to send again', () => {
    const cause = new Error('connect ECONNREFUSED');
    expect(retriesExhaustedMessage(INGEST_JOBS.csv, 60, cause)).toBe(
      'Nothing was written: the time-series database or the job database could not be reached for 60 minutes (connect ECONNREFUSED). '
      + "Once the platform's health page shows every service up, upload the file again.");
    expect(retriesExhaustedMessage(INGEST_JOBS.deletion, 1, cause)).toContain('for 1 minute (connect ECONNREFUSED). ');
    expect(retriesExhaustedMessage(INGEST_JOBS.deletion, 1, cause)).toMatch(/request the deletion again\.$/);
    expect(retriesExhaustedMessage(INGEST_JOBS.bulkChunk, 0.05, 'timeout')).toMatch(/for 3 seconds \(timeout\)\. .*post the data again\.$/);
    expect(stuckJobMessage(60)).toBe('This job stopped before it finished and no worker could take it up again for 60 minutes, '
      + 'so part of it may be missing. Please send it again (data sent twice is stored once).');
  });
});
