import { createClient, type ClickHouseClient, type ClickHouseSettings, type Logger as ClickHouseLogger } from '@clickhouse/client';
import type { Logger } from './logger.ts';

export type { ClickHouseClient };

/**
 * The client's own messages (failed pings and requests while ClickHouse is down) go through the
 * process's pino logger when one is given, instead of the client's console output. Its errors are
 * debug lines: each also reaches the caller, which logs it as it sees fit (the ingest-worker once per
 * few seconds during an outage rather than once per attempt).
 */
function clickHouseLog(logger: Logger | undefined): { LoggerClass: new () => ClickHouseLogger } | undefined {
  if (!logger) return undefined;
  const child = logger.child({ component: 'clickhouse-client' });
  return {
    LoggerClass: class implements ClickHouseLogger {
      trace({ message, args }: { message: string; args?: Record<string, unknown> }) { child.trace({ args }, message); }
      debug({ message, args }: { message: string; args?: Record<string, unknown> }) { child.debug({ args }, message); }
      info({ message, args }: { message: string; args?: Record<string, unknown> }) { child.info({ args }, message); }
      warn({ message, args, err }: { message: string; args?: Record<string, unknown>; err?: Error }) { child.warn({ args, err }, message); }
      error({ message, args, err }: { message: string; args?: Record<string, unknown>; err: Error }) { child.debug({ args, err }, message); }
    },
  };
}

/** Where the time-series tables live: CLICKHOUSE_CLUSTER and CLICKHOUSE_INSERT_QUORUM of the configuration. */
export interface ClickHouseTopology {
  CLICKHOUSE_CLUSTER?: string | undefined;
  CLICKHOUSE_INSERT_QUORUM?: number | undefined;
}

/**
 * The settings a client of a cluster sends with every statement (none on one server: ClickHouse 18.16
 * does not know newer settings). An insert into a Distributed table is split by the sharding key and
 * written to one replica of each shard before it answers (insert_distributed_sync: the default queues
 * it on the receiving server's disk, where a hard crash loses it); the shard's replicas copy it among
 * themselves (internal_replication) and drop a retried block identical to one they hold, so a retry
 * after an unknown outcome stores nothing twice. A subquery over a Distributed table inside a query
 * over another reads the shard's own table (distributed_product_mode): a series lives on one shard.
 * Every process reads and writes the first replica of each shard that answers (in_order, whichever
 * server received the statement): replication is asynchronous, and a rollup or a deletion computed on
 * another replica than the rows it covers were written to could miss them.
 */
export function clusterSettings(topology: ClickHouseTopology): ClickHouseSettings {
  if (!topology.CLICKHOUSE_CLUSTER) return {};
  const quorum = topology.CLICKHOUSE_INSERT_QUORUM ?? 0;
  return {
    insert_distributed_sync: 1,
    distributed_product_mode: 'local',
    load_balancing: 'in_order',
    prefer_localhost_replica: 0,
    ...(quorum >= 2 ? { insert_quorum: quorum, insert_quorum_timeout: '60000' } : {}),
  } as ClickHouseSettings;
}

export function createClickHouse(url: string, database: string, logger?: Logger, requestTimeoutMs = 30_000, topology: ClickHouseTopology = {}): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: requestTimeoutMs,
    compression: { request: false, response: false },
    clickhouse_settings: clusterSettings(topology),
    log: clickHouseLog(logger),
  });
}

/** A client without a default database, to create the database itself. */
export function createClickHouseAdmin(url: string, logger?: Logger): ClickHouseClient {
  return createClient({ url, request_timeout: 60_000, log: clickHouseLog(logger) });
}
