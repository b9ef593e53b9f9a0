/** Runs (spec/02 §3, §4, §7): one process run in a facility, with its derived status. */
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
import { requireFacility } from '../facilities/store.ts';
import { afterUnitOperationsDeleted, recordUnitOperationsDeleted } from '../unit-operations/deletion.ts';
import { UNIT_OPERATION_COLUMNS, type UnitOperationRow } from '../unit-operations/store.ts';
import { mergeTime, requireRun, RUN_COLUMNS, toRun, type RunRow } from './store.ts';

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
    const { limit, offset } = request.query;
    // Both queries walk the index runs (organization_id, id DESC).
    const [list, count] = await Promise.all([
      deps.pg.query<RunRow>(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE organization_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`,
        [organizationId, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM runs WHERE organization_id = $1', [organizationId]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    const now = new Date();
    return list.rows.map((row) => toRun(row, now));
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
      const { rows } = await client.query<RunRow>(
        `INSERT INTO runs (organization_id, facility_id, name, strain, target, description, start_time, end_time, scale_liters, scale_grams)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${RUN_COLUMNS}`,
        [
          organizationId, body.facility_id, body.name, body.strain ?? null, body.target, body.description ?? null,
          toIsoTimestamp(body.start_time ?? null), toIsoTimestamp(body.end_time ?? null),
          body.scale_liters ?? null, body.scale_grams ?? null,
        ],
      );
      const created = toRun(rows[0]!);
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
      if (body.facility_id !== undefined && body.facility_id !== existing.facility_id) {
        await requireFacility(client, organizationId, body.facility_id, { lock: 'share' });
      }
      const startTime = mergeTime(body.start_time, existing.start_time);
      const endTime = mergeTime(body.end_time, existing.end_time);
      // The body alone may be a valid range and still contradict the stored start or end.
      const rangeError = dateRangeError(startTime, endTime);
      if (rangeError) throw badRequest(rangeError);
      const keep = <T>(given: T | undefined, stored: T): T => (given !== undefined ? given : stored);
      const { rows } = await client.query<RunRow>(
        `UPDATE runs SET facility_id = $3, name = $4, strain = $5, target = $6, description = $7, start_time = $8,
                end_time = $9, scale_liters = $10, scale_grams = $11, updated_at = now()
          WHERE id = $1 AND organization_id = $2 RETURNING ${RUN_COLUMNS}`,
        [
          existing.id, organizationId,
          keep(body.facility_id, existing.facility_id),
          keep(body.name, existing.name),
          keep(body.strain, existing.strain),
          keep(body.target, existing.target),
          keep(body.description, existing.description),
          startTime, endTime,
          keep(body.scale_liters, existing.scale_liters),
          keep(body.scale_grams, existing.scale_grams),
        ],
      );
      const updated = toRun(rows[0]!);
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
      // Deleted explicitly (rather than by the foreign key's cascade) to learn which ones went.
      const deleted = await client.query<UnitOperationRow>(
        `DELETE FROM unit_operations WHERE run_id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
        [existing.id, organizationId],
      );
      await client.query('DELETE FROM runs WHERE id = $1 AND organization_id = $2', [existing.id, organizationId]);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'run', resource_id: existing.id, changes: { before: toRun(existing), after: null },
      });
      await recordUnitOperationsDeleted(client, request, deleted.rows);
      return deleted.rows;
    });
    await afterUnitOperationsDeleted(deps, request, unitOperations);
    return reply.status(204).send(null);
  });
}
