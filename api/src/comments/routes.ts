/**
 * Comment routes: notes pinned to a moment of a unit operation's chart. Anyone who may create data may
 * comment; only the author or an admin may change or delete a comment. The queries live in repository.ts.
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
import { forbidden } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { recordAudit } from '../audit/record.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';
import {
  deleteComment, insertComment, listOrganizationComments, listUnitOperationComments, requireComment, toComment, updateComment,
  type CommentRow,
} from './repository.ts';

const tags = ['Comments'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

export const COMMENT_AUTHOR_ONLY = 'Only the author of a comment or an admin may change or delete it.';
export const COMMENT_NEEDS_USER = 'Comments are written by users: an API key cannot author a comment.';

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
    const page = await listUnitOperationComments(deps.pg, unitOperation.id, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toComment);
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
    const page = await listOrganizationComments(deps.pg, organizationId, { limit, offset, runIds: runIds ?? null, type: type ?? null });
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toComment);
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
      const id = await insertComment(client, principal.organizationId, {
        unitOperationId: unitOperation.id, author: principal.userId!, timestamp: toIsoTimestamp(body.timestamp),
        content: body.content, color: body.color ?? null,
      });
      const created = toComment(await requireComment(client, principal.organizationId, id));
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
      await updateComment(client, principal.organizationId, existing.id, {
        content: body.content,
        timestamp: body.timestamp === undefined ? undefined : toIsoTimestamp(body.timestamp),
        color: body.color,
      });
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
      await deleteComment(client, principal.organizationId, existing.id);
      await auditComment(client, request, 'delete', existing.id, toComment(existing), null);
    });
    return reply.status(204).send(null);
  });
}
