import { createClient, type ClickHouseClient, type Logger as ClickHouseLogger } from '@clickhouse/client';
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

export function createClickHouse(url: string, database: string, logger?: Logger, requestTimeoutMs = 30_000): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: requestTimeoutMs,
    compression: { request: false, response: false },
    // ClickHouse 18.16 (Debian) does not know newer settings; send none by default.
    clickhouse_settings: {},
    log: clickHouseLog(logger),
  });
}

/** A client without a default database, to create the database itself. */
export function createClickHouseAdmin(url: string, logger?: Logger): ClickHouseClient {
  return createClient({ url, request_timeout: 60_000, log: clickHouseLog(logger) });
}
