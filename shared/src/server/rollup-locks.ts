/**
 * The locks that order the writers of an organization's rollups. A recomputation from the points is
 * exact whatever runs beside it, but a composition (rollup-chains.ts) adds a write's figures to the
 * row it last stored, and is exact only if no other writer stores a row for those minutes between its
 * check and its insert. So every writer of rollups holds its organizations' lock: recomputations share
 * it and wait for it; a composition takes it alone and only if it is free at once, and otherwise
 * recomputes (so no writer ever waits behind a queued composition).
 *
 * Transaction-scoped PostgreSQL advisory locks on a connection of their own: a process killed with -9
 * frees them with its connection. The work gets that connection for the versions it draws, so a full
 * pool cannot stop a lock holder.
 */
import type { Pool, PoolClient } from './postgres.ts';
import { idList } from '../points-sql.ts';

const lockKeys = (organizationIds: Iterable<number>) =>
  `SELECT hashtextextended('rollups:' || o::text, 0) AS k FROM unnest(ARRAY[${idList([...new Set(organizationIds)])}]::bigint[]) o`;

async function holding<T>(pool: Pool, lockStatement: string, work: (client: PoolClient) => Promise<T>): Promise<{ locked: false } | { locked: true; value: T }> {
  const client = await pool.connect();
  let broken = false;
  try {
    // One round trip: a simple query runs both statements.
    const results = await client.query(`BEGIN; ${lockStatement}`) as unknown as Array<{ rows: Array<{ locked: boolean | null }> }>;
    if (results[1]!.rows[0]?.locked === false) {
      await client.query('ROLLBACK');
      return { locked: false };
    }
    const value = await work(client);
    await client.query('COMMIT');
    return { locked: true, value };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => { broken = true; });
    throw error;
  } finally {
    // A connection whose rollback failed is closed, which releases its locks for certain.
    client.release(broken);
  }
}

/** Runs a recomputation of the organizations' rollups holding their lock, shared with other recomputations. */
export async function whileRecomputing<T>(pool: Pool, organizationIds: Iterable<number>, work: (client: PoolClient) => Promise<T>): Promise<T> {
  // No order needed: shared holders never block one another, and the one taking it alone never waits.
  const outcome = await holding(pool, `SELECT count(pg_advisory_xact_lock_shared(k)) >= 0 AS locked FROM (${lockKeys(organizationIds)}) keys`, work);
  if (!outcome.locked) throw new Error('a shared rollup lock was refused');
  return outcome.value;
}

/**
 * Runs a composition of the organizations' rollups holding their lock alone, if no other writer holds
 * it now; answers undefined, having run nothing, otherwise.
 */
export async function ifAlone<T>(pool: Pool, organizationIds: Iterable<number>, work: (client: PoolClient) => Promise<T>): Promise<T | undefined> {
  const outcome = await holding(pool, `SELECT bool_and(pg_try_advisory_xact_lock(k)) AS locked FROM (${lockKeys(organizationIds)}) keys`, work);
  return outcome.locked ? outcome.value : undefined;
}
