import pg from 'pg';

// BIGINT ids and counts arrive as numbers: every id in this product fits well under 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Either a pool (one statement, committed on its own) or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 5_000 });
  // A client losing its connection (PostgreSQL restarted or unreachable) must not crash the process:
  // an idle one is dropped by the pool; one checked out between two queries (a transaction, a job's
  // lease) emits 'error' on itself, and its next query fails, which its user handles.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * SQLSTATEs and socket codes of a PostgreSQL that cannot be reached or is restarting (connection
 * exceptions, shutdown in progress, too many connections): the request was not carried out and may
 * be sent again.
 */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);
const UNREACHABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|Client was closed and is not queryable/i;

/** Whether the error says PostgreSQL could not be reached (rather than that the query was wrong). */
export function isPostgresUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  return error instanceof Error && UNREACHABLE_MESSAGES.test(error.message);
}

/** Runs fn inside a transaction on one client, committing on success and rolling back on error. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
