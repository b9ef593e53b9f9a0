/** Comment rows in PostgreSQL: every query the comment routes make, and the wire form with the author's name. */
import type pg from 'pg';
import { COMMENT_COLOR_PATTERN, toIsoTimestamp, type Comment } from '@bioprocess/shared/entities';
import { notFound } from '../platform/http-error.ts';
import type { RowPage } from '../platform/organization-rows.ts';

export const COMMENT_NOT_FOUND = 'Comment not found';

export interface CommentRow {
  id: number;
  organization_id: number;
  unit_operations_id: number;
  run_id: number;
  unit_operation_start_time: Date | null;
  timestamp: Date;
  content: string;
  author: number | null;
  author_name: string | null;
  color: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Comments with their author's name and where they sit (run, unit operation start). */
const COMMENT_SELECT = `
  SELECT c.id, c.organization_id, c.unit_operations_id, uo.run_id, uo.start_time AS unit_operation_start_time,
         c.timestamp, c.content, c.author, u.name AS author_name, c.color, c.created_at, c.updated_at
    FROM comments c
    JOIN unit_operations uo ON uo.id = c.unit_operations_id
    LEFT JOIN users u ON u.id = c.author`;

export function toComment(row: CommentRow): Comment {
  return {
    ...row,
    // Colours stored before they had to be hex colours may be any text: such a one is no colour at all.
    color: row.color !== null && COMMENT_COLOR_PATTERN.test(row.color) ? row.color : null,
    unit_operation_start_time: toIsoTimestamp(row.unit_operation_start_time),
    timestamp: toIsoTimestamp(row.timestamp),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

export async function requireComment(db: pg.Pool | pg.PoolClient, organizationId: number, commentId: number, options: { forUpdate?: boolean } = {}): Promise<CommentRow> {
  const { rows } = await db.query<CommentRow>(
    `${COMMENT_SELECT} WHERE c.id = $1 AND c.organization_id = $2${options.forUpdate ? ' FOR UPDATE OF c' : ''}`,
    [commentId, organizationId],
  );
  if (!rows[0]) throw notFound(COMMENT_NOT_FOUND);
  return rows[0];
}

/** The comments of one unit operation (already checked to be the organisation's), by timestamp. */
export async function listUnitOperationComments(
  db: pg.Pool | pg.PoolClient,
  unitOperationId: number,
  page: { limit: number; offset: number },
): Promise<RowPage<CommentRow>> {
  const [list, count] = await Promise.all([
    db.query<CommentRow>(
      `${COMMENT_SELECT} WHERE c.unit_operations_id = $1 ORDER BY c.timestamp, c.id LIMIT $2 OFFSET $3`,
      [unitOperationId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM comments WHERE unit_operations_id = $1', [unitOperationId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/** The organisation's comments, newest first, optionally only those on unit operations of the given runs and type. */
export async function listOrganizationComments(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  query: { limit: number; offset: number; runIds: number[] | null; type: string | null },
): Promise<RowPage<CommentRow>> {
  const filter = `c.organization_id = $1 AND ($2::bigint[] IS NULL OR uo.run_id = ANY($2)) AND ($3::text IS NULL OR uo.type = $3)`;
  const filterValues = [organizationId, query.runIds, query.type];
  const [list, count] = await Promise.all([
    db.query<CommentRow>(`${COMMENT_SELECT} WHERE ${filter} ORDER BY c.id DESC LIMIT $4 OFFSET $5`, [...filterValues, query.limit, query.offset]),
    db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM comments c JOIN unit_operations uo ON uo.id = c.unit_operations_id WHERE ${filter}`,
      filterValues,
    ),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

export async function insertComment(
  db: pg.PoolClient,
  organizationId: number,
  values: { unitOperationId: number; author: number; timestamp: string | null; content: string; color: string | null },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO comments (organization_id, unit_operations_id, author, timestamp, content, color)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [organizationId, values.unitOperationId, values.author, values.timestamp, values.content, values.color],
  );
  return rows[0]!.id;
}

/** A timestamp left out keeps the stored one; the colour changes only when given (null clears it). */
export async function updateComment(
  db: pg.PoolClient,
  organizationId: number,
  commentId: number,
  values: { content: string; timestamp: string | null | undefined; color: string | null | undefined },
): Promise<void> {
  await db.query(
    `UPDATE comments SET content = $3, timestamp = coalesce($4, timestamp), color = CASE WHEN $5 THEN $6 ELSE color END,
            updated_at = now()
      WHERE id = $1 AND organization_id = $2`,
    [commentId, organizationId, values.content, values.timestamp ?? null, values.color !== undefined, values.color ?? null],
  );
}

export async function deleteComment(db: pg.PoolClient, organizationId: number, commentId: number): Promise<void> {
  await db.query('DELETE FROM comments WHERE id = $1 AND organization_id = $2', [commentId, organizationId]);
}
