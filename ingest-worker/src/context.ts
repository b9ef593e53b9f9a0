/** What every job processor works with. */
import type { BaseEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Redis } from '@bioprocess/shared/server/redis';
import type { BulkWrites } from './bulk-writes.ts';
import type { JobDataPurge } from './job-data-purge.ts';

export interface WorkerContext {
  env: BaseEnv;
  logger: Logger;
  pg: Pool;
  clickhouse: ClickHouseClient;
  /** Data that jobs refer to by key (bulk chunks' rows). */
  redis: Redis;
  /** ClickHouse writes shared by concurrent bulk jobs. */
  bulkWrites: BulkWrites;
  /** Deletes finished bulk jobs' stored data, many jobs per statement. */
  jobDataPurge: JobDataPurge;
  /** Aborted when the worker shuts down: long jobs stop at their next checkpoint. */
  shutdown: AbortSignal;
}
