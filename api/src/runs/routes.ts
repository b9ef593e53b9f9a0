/** Run routes: one process run in a facility, with its derived status; the queries live in repository.ts. */
import { z } from 'zod';
import {
  dateRangeError,
  errorResponseSchema,
  idParamsSchema,
  runCreateSchema,
  runSchema,
  runUpdateSchema,
  toIsoTimestamp,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireFacility } from '../facilities/repository.ts';
import { afterUnitOperationsDeleted, recordUnitOperationsDeleted } from '../unit-operations/deletion.ts';
import { refuseLockedRun } from './review-lock.ts';
import { deleteRun, insertRun, listRuns, mergeTime, requireRun, toRun, updateRun } from './repository.ts';

const tags = ['Runs'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };
const statusNote = 'Every run carries its status, derived from its times (Pending, Active, Completed).';

export async function runRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/runs', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List runs', description: `Newest first. ${statusNote} ${LIST_QUERY_DESCRIPTION}`,
      querystring: listQuerySchema,
      response: { 200: z.array(runSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const page = await listRuns(deps.pg, organizationId, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    const now = new Date();
    return page.rows.map((row) => toRun(row, now));
  });

  app.get('/api/v1/runs/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a run', description: statusNote, params: idParamsSchema, response: { 200: runSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toRun(await requireRun(deps.pg, organizationId, request.params.id));
  });

  app.post('/api/v1/runs', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create a run',
      description: 'facility_id (of the organisation), name and target are required; an end time must be after the start time.',
      body: runCreateSchema, response: { 201: runSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const run = await withTransaction(deps.pg, async (client) => {
      await requireFacility(client, organizationId, body.facility_id, { lock: 'share' });
      const created = toRun(await insertRun(client, organizationId, {
        facility_id: body.facility_id, name: body.name, strain: body.strain ?? null, target: body.target,
        description: body.description ?? null, start_time: toIsoTimestamp(body.start_time ?? null),
        end_time: toIsoTimestamp(body.end_time ?? null), scale_liters: body.scale_liters ?? null, scale_grams: body.scale_grams ?? null,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'run', resource_id: created.id, changes: { before: null, after: created },
      });
      return created;
    });
    return reply.status(201).send(run);
  });

  app.put('/api/v1/runs/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update a run',
      description: 'Fields left out keep their value; null clears an optional field. The resulting times must form a valid range.',
      params: idParamsSchema, body: runUpdateSchema, response: { 200: runSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const after = await withTransaction(deps.pg, async (client) => {
      const existing = await requireRun(client, organizationId, request.params.id, { lock: 'update' });
      await refuseLockedRun(client, organizationId, existing.id);
      if (body.facility_id !== undefined && body.facility_id !== existing.facility_id) {
        await requireFacility(client, organizationId, body.facility_id, { lock: 'share' });
      }
      const startTime = mergeTime(body.start_time, existing.start_time);
      const endTime = mergeTime(body.end_time, existing.end_time);
      // The body alone may be a valid range and still contradict the stored start or end.
      const rangeError = dateRangeError(startTime, endTime);
      if (rangeError) throw badRequest(rangeError);
      const keep = <T>(given: T | undefined, stored: T): T => (given !== undefined ? given : stored);
      const updated = toRun(await updateRun(client, organizationId, existing.id, {
        facility_id: keep(body.facility_id, existing.facility_id),
        name: keep(body.name, existing.name),
        strain: keep(body.strain, existing.strain),
        target: keep(body.target, existing.target),
        description: keep(body.description, existing.description),
        start_time: startTime,
        end_time: endTime,
        scale_liters: keep(body.scale_liters, existing.scale_liters),
        scale_grams: keep(body.scale_grams, existing.scale_grams),
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'run', resource_id: updated.id,
        changes: { before: toRun(existing), after: updated },
      });
      return updated;
    });
    return after;
  });

  app.delete('/api/v1/runs/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Delete a run', description: 'Also deletes its unit operations, their comments and their time series.',
      params: idParamsSchema, response: { 204: z.null(), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const unitOperations = await withTransaction(deps.pg, async (client) => {
      const existing = await requireRun(client, organizationId, request.params.id, { lock: 'update' });
      await refuseLockedRun(client, organizationId, existing.id);
      const deleted = await deleteRun(client, organizationId, existing.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'run', resource_id: existing.id, changes: { before: toRun(existing), after: null },
      });
      await recordUnitOperationsDeleted(client, request, deleted);
      return deleted;
    });
    await afterUnitOperationsDeleted(deps, request, unitOperations);
    return reply.status(204).send(null);
  });
}
