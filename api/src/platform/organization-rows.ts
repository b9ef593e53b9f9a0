/** Organisation-scoped lookups by id, shared by every metadata store. */
import type pg from 'pg';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { deriveStatus } from '@bioprocess/shared/status';
import { notFound } from './http-error.ts';

/**
 * Row locks of the lookups: 'update' for a row about to change or go, 'share' for a row a new row will
 * point at (a concurrent delete then waits, and sees the new dependent, instead of the insert failing
 * on the foreign key).
 */
export type RowLock = 'update' | 'share';

export function lockClause(lock: RowLock | undefined): string {
  return lock === 'update' ? ' FOR UPDATE' : lock === 'share' ? ' FOR SHARE' : '';
}

/** A table of organisation-owned rows: its name, the columns a lookup reads, and its 404 message. */
export interface OrganizationTable {
  name: string;
  columns: string;
  notFound: string;
}

/** The row if it belongs to the organisation; another organisation's row is "not found". */
export async function requireOrganizationRow<Row extends pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  table: OrganizationTable,
  organizationId: number,
  id: number,
  options: { lock?: RowLock } = {},
): Promise<Row> {
  const { rows } = await db.query<Row>(
    `SELECT ${table.columns} FROM ${table.name} WHERE id = $1 AND organization_id = $2${lockClause(options.lock)}`,
    [id, organizationId],
  );
  if (!rows[0]) throw notFound(table.notFound);
  return rows[0];
}

/** One page of an organisation's rows and how many there are in all. */
export interface RowPage<Row> {
  rows: Row[];
  total: number;
}

/** A page of the organisation's rows in the given order; both queries walk the (organization_id, id) index. */
export async function listOrganizationRows<Row extends pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  table: OrganizationTable,
  organizationId: number,
  page: { limit: number; offset: number; orderBy: string },
): Promise<RowPage<Row>> {
  const [list, count] = await Promise.all([
    db.query<Row>(
      `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 ORDER BY ${page.orderBy} LIMIT $2 OFFSET $3`,
      [organizationId, page.limit, page.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM ${table.name} WHERE organization_id = $1`, [organizationId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

export async function deleteOrganizationRow(db: pg.Pool | pg.PoolClient, table: OrganizationTable, organizationId: number, id: number): Promise<void> {
  await db.query(`DELETE FROM ${table.name} WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
}

interface TimedRow {
  start_time: Date | null;
  end_time: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The wire form of a row with a time window (runs, unit operations): ISO times and the status they give. */
export function withDerivedStatus<Row extends TimedRow>(row: Row, now: Date) {
  return {
    ...row,
    start_time: toIsoTimestamp(row.start_time),
    end_time: toIsoTimestamp(row.end_time),
    status: deriveStatus(row.start_time, row.end_time, now),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}
