import { createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export function createClickHouse(url: string, database: string): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: 30_000,
    compression: { request: false, response: false },
    // ClickHouse 18.16 (Debian) does not know newer settings; send none by default.
    clickhouse_settings: {},
  });
}

/** A client without a default database, to create the database itself. */
export function createClickHouseAdmin(url: string): ClickHouseClient {
  return createClient({ url, request_timeout: 60_000 });
}
