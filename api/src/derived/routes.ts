/**
 * Derived parameter routes: formulas over instrument series, per organisation. Everyone reads them
 * and draws them; editors and admins create, edit and delete them (audited, each edit a new version).
 * Every organisation starts with editable copies of the built-in library.
 */
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import {
  derivedParameterCreateSchema,
  derivedParameterSchema,
  derivedParameterUpdateSchema,
  derivedParameterVersionSchema,
  derivedPreviewBodySchema,
  derivedSeriesQuerySchema,
  derivedSeriesSchema,
  type DerivedSeries,
} from '@bioprocess/shared/derived/contracts';
import { parseTimestampInput, TIME_SERIES_DEFAULT_LIMIT } from '@bioprocess/shared/timeseries';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';
import {
  deleteDerivedParameter,
  ensureLibraryCopies,
  insertDerivedParameter,
  listDerivedParameters,
  listVersions,
  requireDerivedParameter,
  rethrowNameTaken,
  toDerivedParameter,
  updateDerivedParameter,
} from './repository.ts';
import { computeDerivedSeries, parseOrRefuse } from './series.ts';

const tags = ['Derived parameters'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };
const expressionNote = 'A bad expression answers 400 naming the position and the problem; an unknown function or property is named.';

const unitOperationDerivedParams = z.object({
  id: idParamsSchema.shape.id,
  derivedId: idParamsSchema.shape.id,
});

function rangeOf(query: { start_time?: string; end_time?: string; limit?: number }) {
  const startMs = query.start_time === undefined ? null : parseTimestampInput(query.start_time);
  const endMs = query.end_time === undefined ? null : parseTimestampInput(query.end_time);
  if (startMs !== null && endMs !== null && endMs < startMs) throw badRequest('End time must be after start time.');
  return { startMs, endMs, limit: query.limit ?? TIME_SERIES_DEFAULT_LIMIT };
}

/**
 * A computed series, serialised once: it was built here from validated inputs, so the response schema
 * (for the OpenAPI document) is not run over each of its up to READ_MAX_POINTS values.
 */
function sendComputed(reply: FastifyReply, series: DerivedSeries): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(Buffer.from(JSON.stringify(series)));
}

export async function derivedParameterRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/derived-parameters', {
    config: { access: 'read' },
    schema: { tags, summary: 'The organisation\'s derived parameters, by name', response: { 200: z.array(derivedParameterSchema) } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    await ensureLibraryCopies(deps.pg, organizationId);
    return (await listDerivedParameters(deps.pg, organizationId)).map(toDerivedParameter);
  });

  app.get('/api/v1/derived-parameters/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a derived parameter', params: idParamsSchema, response: { 200: derivedParameterSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toDerivedParameter(await requireDerivedParameter(deps.pg, organizationId, request.params.id));
  });

  app.get('/api/v1/derived-parameters/:id/versions', {
    config: { access: 'read' },
    schema: { tags, summary: 'Every version of a derived parameter, newest first', params: idParamsSchema, response: { 200: z.array(derivedParameterVersionSchema), ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const row = await requireDerivedParameter(deps.pg, organizationId, request.params.id);
    return listVersions(deps.pg, row.id);
  });

  app.post('/api/v1/derived-parameters', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create a derived parameter', description: `Names are unique in the organisation (409). ${expressionNote}`,
      body: derivedParameterCreateSchema, response: { 201: derivedParameterSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    parseOrRefuse(request.body.expression);
    const created = await withTransaction(deps.pg, async (client) => {
      const row = toDerivedParameter(await insertDerivedParameter(client, principal.organizationId, request.body, principal.userId));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'derived_parameter', resource_id: row.id, changes: { before: null, after: row },
      });
      return row;
    }).catch(rethrowNameTaken);
    return reply.status(201).send(created);
  });

  app.put('/api/v1/derived-parameters/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Edit a derived parameter (a new version)', description: `Fields left out keep their value. ${expressionNote}`,
      params: idParamsSchema, body: derivedParameterUpdateSchema, response: { 200: derivedParameterSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const body = request.body;
    if (body.expression !== undefined) parseOrRefuse(body.expression);
    return withTransaction(deps.pg, async (client) => {
      const existing = await requireDerivedParameter(client, principal.organizationId, request.params.id, { lock: 'update' });
      const updated = toDerivedParameter(await updateDerivedParameter(client, existing, {
        name: body.name ?? existing.name,
        unit: body.unit !== undefined ? body.unit : existing.unit,
        expression: body.expression ?? existing.expression,
        description: body.description !== undefined ? body.description : existing.description,
        sample_values: body.sample_values ?? existing.sample_values,
      }, principal.userId));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'derived_parameter', resource_id: updated.id,
        changes: { before: toDerivedParameter(existing), after: updated },
      });
      return updated;
    }).catch(rethrowNameTaken);
  });

  app.delete('/api/v1/derived-parameters/:id', {
    config: { access: 'edit' },
    schema: { tags, summary: 'Delete a derived parameter with its versions', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = await requireDerivedParameter(client, organizationId, request.params.id, { lock: 'update' });
      await deleteDerivedParameter(client, organizationId, existing.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'derived_parameter', resource_id: existing.id,
        changes: { before: toDerivedParameter(existing), after: null },
      });
    });
    return reply.status(204).send(null);
  });

  app.post('/api/v1/derived-parameters/preview', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'Compute an unsaved formula on a unit operation (the editor\'s live preview)', description: expressionNote,
      body: derivedPreviewBodySchema, response: { 200: derivedSeriesSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, body.unit_operation_id);
    return sendComputed(reply, await computeDerivedSeries(deps, organizationId, unitOperation,
      { id: null, version: null, name: 'Preview', unit: null, expression: body.expression, sample_values: body.sample_values }, rangeOf(body)));
  });

  app.get('/api/v1/unit-operations/:id/derived/:derivedId', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'A derived parameter computed over a unit operation',
      description: 'The same window and size rules as readings: the unit operation\'s window (clipped by start_time and end_time), '
        + 'at most `limit` values, bucket averages of the inputs when they hold more; inputs x limit at most READ_MAX_POINTS (200000), '
        + 'else 400. The answer names the formula\'s version.',
      params: unitOperationDerivedParams, querystring: derivedSeriesQuerySchema, response: { 200: derivedSeriesSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
    const formula = await requireDerivedParameter(deps.pg, organizationId, request.params.derivedId);
    return sendComputed(reply, await computeDerivedSeries(deps, organizationId, unitOperation, formula, rangeOf(request.query)));
  });
}
