/**
 * Comments (spec/02 §3, §7): notes pinned to a moment of a unit operation's chart. Anyone who may
 * create data may comment; only the author or an admin may change or delete a comment.
 */
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import {
  commentCreateSchema,
  commentListQuerySchema,
  commentSchema,
  commentUpdateSchema,
  errorResponseSchema,
  idParamsSchema,
  toIsoTimestamp,
  type Comment,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { forbidden, notFound } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { recordAudit } from '../audit/record.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';

const tags = ['Comments'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

export const COMMENT_NOT_FOUND = 'Comment not found';
export const COMMENT_AUTHOR_ONLY = 'Only the author of a comment or an admin may change or delete it.';
export const COMMENT_NEEDS_USER = 'Comments are written by users: an API key cannot author a comment.';

interface CommentRow {
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

function toComment(row: CommentRow): Comment {
  return {
    ...row,
    unit_operation_start_time: toIsoTimestamp(row.unit_operation_start_time),
    timestamp: toIsoTimestamp(row.timestamp),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

async function requireComment(db: pg.Pool | pg.PoolClient, organizationId: number, commentId: number, options: { forUpdate?: boolean } = {}): Promise<CommentRow> {
  const { rows } = await db.query<CommentRow>(
    `${COMMENT_SELECT} WHERE c.id = $1 AND c.organization_id = $2${options.forUpdate ? ' FOR UPDATE OF c' : ''}`,
    [commentId, organizationId],
  );
  if (!rows[0]) throw notFound(COMMENT_NOT_FOUND);
  return rows[0];
}

function isAdmin(principal: RequestPrincipal): boolean {
  return principal.superuser || principal.roles.includes('admin');
}

function assertMayChange(principal: RequestPrincipal, comment: CommentRow): void {
  const isAuthor = principal.userId !== null && comment.author === principal.userId;
  if (!isAuthor && !isAdmin(principal)) throw forbidden(COMMENT_AUTHOR_ONLY);
}

function auditComment(client: pg.PoolClient, request: FastifyRequest, action: string, id: number, before: Comment | null, after: Comment | null) {
  return recordAudit(client, request, { event_type: 'data', action, resource_type: 'comment', resource_id: id, changes: { before, after } });
}

export async function commentRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/unit-operations/:id/comments', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List the comments of a unit operation', description: `By timestamp. ${LIST_QUERY_DESCRIPTION}`,
      params: idParamsSchema, querystring: listQuerySchema,
      response: { 200: z.array(commentSchema), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
    const { limit, offset } = request.query;
    const [list, count] = await Promise.all([
      deps.pg.query<CommentRow>(
        `${COMMENT_SELECT} WHERE c.unit_operations_id = $1 ORDER BY c.timestamp, c.id LIMIT $2 OFFSET $3`,
        [unitOperation.id, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM comments WHERE unit_operations_id = $1', [unitOperation.id]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toComment);
  });

  app.get('/api/v1/comments', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List comments of the organisation',
      description:
        'Newest first. With `run_ids` (comma-separated) and/or `type`, only the comments of unit operations of ' +
        'those runs and that type (the compare screen). Each comment carries its run_id and its unit operation\'s ' +
        `start time. ${LIST_QUERY_DESCRIPTION}`,
      querystring: commentListQuerySchema,
      response: { 200: z.array(commentSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const { limit, offset, run_ids: runIds, type } = request.query;
    const filter = `c.organization_id = $1 AND ($2::bigint[] IS NULL OR uo.run_id = ANY($2)) AND ($3::text IS NULL OR uo.type = $3)`;
    const filterValues = [organizationId, runIds ?? null, type ?? null];
    const [list, count] = await Promise.all([
      deps.pg.query<CommentRow>(`${COMMENT_SELECT} WHERE ${filter} ORDER BY c.id DESC LIMIT $4 OFFSET $5`, [...filterValues, limit, offset]),
      deps.pg.query<{ total: number }>(
        `SELECT count(*) AS total FROM comments c JOIN unit_operations uo ON uo.id = c.unit_operations_id WHERE ${filter}`,
        filterValues,
      ),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toComment);
  });

  app.get('/api/v1/comments/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a comment', params: idParamsSchema, response: { 200: commentSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toComment(await requireComment(deps.pg, organizationId, request.params.id));
  });

  app.post('/api/v1/comments', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create a comment', description: 'The author is the signed-in user; API keys cannot author comments.',
      body: commentCreateSchema, response: { 201: commentSchema, 403: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.userId === null) throw forbidden(COMMENT_NEEDS_USER);
    const body = request.body;
    const comment = await withTransaction(deps.pg, async (client) => {
      const unitOperation = await requireUnitOperation(client, principal.organizationId, body.unit_operations_id, { lock: 'share' });
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO comments (organization_id, unit_operations_id, author, timestamp, content, color)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [principal.organizationId, unitOperation.id, principal.userId, toIsoTimestamp(body.timestamp), body.content, body.color ?? null],
      );
      const created = toComment(await requireComment(client, principal.organizationId, rows[0]!.id));
      await auditComment(client, request, 'create', created.id, null, created);
      return created;
    });
    return reply.status(201).send(comment);
  });

  app.put('/api/v1/comments/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update a comment', description: 'Only the author or an admin; the timestamp and colour are optional.',
      params: idParamsSchema, body: commentUpdateSchema, response: { 200: commentSchema, 403: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const body = request.body;
    return withTransaction(deps.pg, async (client) => {
      const existing = await requireComment(client, principal.organizationId, request.params.id, { forUpdate: true });
      assertMayChange(principal, existing);
      await client.query(
        `UPDATE comments SET content = $3, timestamp = coalesce($4, timestamp), color = CASE WHEN $5 THEN $6 ELSE color END,
                updated_at = now()
          WHERE id = $1 AND organization_id = $2`,
        [
          existing.id, principal.organizationId, body.content,
          body.timestamp === undefined ? null : toIsoTimestamp(body.timestamp),
          body.color !== undefined, body.color ?? null,
        ],
      );
      const after = toComment(await requireComment(client, principal.organizationId, existing.id));
      await auditComment(client, request, 'update', after.id, toComment(existing), after);
      return after;
    });
  });

  app.delete('/api/v1/comments/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Delete a comment', description: 'Only the author or an admin.',
      params: idParamsSchema, response: { 204: z.null(), 403: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = await requireComment(client, principal.organizationId, request.params.id, { forUpdate: true });
      assertMayChange(principal, existing);
      await client.query('DELETE FROM comments WHERE id = $1 AND organization_id = $2', [existing.id, principal.organizationId]);
      await auditComment(client, request, 'delete', existing.id, toComment(existing), null);
    });
    return reply.status(204).send(null);
  });
}
