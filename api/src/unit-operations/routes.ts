/** Unit-operation routes: the steps of a run, each on one piece of equipment; the SQL is shared/src/server/unit-operations-repository.ts. */
import { z } from 'zod';
import {
  dateRangeError,
  equipmentSchema,
  errorResponseSchema,
  idParamsSchema,
  unitOperationCreateSchema,
  unitOperationListQuerySchema,
  unitOperationSchema,
  unitOperationTypeSchema,
  unitOperationUpdateSchema,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, notFound } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireRun, mergeTime } from '../runs/repository.ts';
import { refuseLockedRun, refuseLockedUnitOperation } from '../runs/review-lock.ts';
import { EQUIPMENT_NOT_FOUND, requireEquipment, toEquipment } from '../equipment/repository.ts';
import { afterUnitOperationsDeleted, recordUnitOperationsDeleted } from './deletion.ts';
import { insertUnitOperation, refuseOverlap } from './windows.ts';
import { deletionPreview, deletionPreviewQuerySchema, deletionPreviewSchema } from './deletion-preview.ts';
import { unitOperationTypesWithEquipment } from './allowed-equipment.ts';
import { instrumentsWithDataSchema, windowCheckQuerySchema, windowCheckSchema } from '@bioprocess/shared/unit-operation-windows';
import { instrumentsWithData } from './instruments-with-data.ts';
import { checkUploadWindow } from './window-check.ts';
import {
  deleteUnitOperation, listRunUnitOperations, listUnitOperations, updateUnitOperation,
} from '@bioprocess/shared/server/unit-operations-repository';
import { listEquipmentKinds, mergeProperties, requireUnitOperation, toUnitOperation, UNIT_OPERATION_NOT_FOUND } from './repository.ts';

const tags = ['Unit operations'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema, 409: errorResponseSchema };
const statusNote = 'Every unit operation carries its status, derived from its times (Pending, Active, Completed).';

export async function unitOperationRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/unit-operations', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List unit operations',
      description: `In creation order, optionally only those of one run or one type. ${statusNote} ${LIST_QUERY_DESCRIPTION}`,
      querystring: unitOperationListQuerySchema,
      response: { 200: z.array(unitOperationSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const { limit, offset, run_id: runId, type } = request.query;
    const page = await listUnitOperations(deps.pg, organizationId, { limit, offset, runId: runId ?? null, type: type ?? null });
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    const now = new Date();
    return page.rows.map((row) => toUnitOperation(row, now));
  });

  app.get('/api/v1/runs/:id/unit-operations', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List the unit operations of a run',
      description: `In process order: by start time (those without one last), then by id. ${statusNote} ${LIST_QUERY_DESCRIPTION}`,
      params: idParamsSchema, querystring: listQuerySchema,
      response: { 200: z.array(unitOperationSchema), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const run = await requireRun(deps.pg, organizationId, request.params.id);
    const page = await listRunUnitOperations(deps.pg, organizationId, run.id, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    const now = new Date();
    return page.rows.map((row) => toUnitOperation(row, now));
  });

  app.get('/api/v1/unit-operation-types', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List unit-operation types with the equipment allowed for each',
      description:
        'Equipment qualifies for a type when its equipment type contains one of the type\'s keywords ' +
        '(e.g. bioreactor or fermenter for fermentation, centrifuge for centrifugation, chromatography, column ' +
        'or skid for chromatography); when none of the organisation\'s equipment matches, all of it is allowed.',
      response: { 200: z.array(unitOperationTypeSchema) },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return unitOperationTypesWithEquipment(await listEquipmentKinds(deps.pg, organizationId));
  });

  app.get('/api/v1/unit-operations/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a unit operation', description: statusNote, params: idParamsSchema, response: { 200: unitOperationSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toUnitOperation(await requireUnitOperation(deps.pg, organizationId, request.params.id));
  });

  app.get('/api/v1/unit-operations/:id/equipment', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'Get the equipment of a unit operation', description: 'Answers 404 when the unit operation has no equipment.',
      params: idParamsSchema, response: { 200: equipmentSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
    if (unitOperation.equipment_id === null) throw notFound(EQUIPMENT_NOT_FOUND);
    return toEquipment(await requireEquipment(deps.pg, organizationId, unitOperation.equipment_id));
  });

  app.post('/api/v1/unit-operations', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create a unit operation',
      description: 'run_id and equipment_id must belong to the organisation; an end time must be after the start time. '
        + 'One piece of equipment runs one unit operation at a time: a window overlapping another unit operation on the same equipment '
        + '(an open-ended one runs until now) answers 409 naming it.',
      body: unitOperationCreateSchema, response: { 201: unitOperationSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const unitOperation = await withTransaction(deps.pg, async (client) => {
      await refuseLockedRun(client, organizationId, body.run_id);
      const created = toUnitOperation(await insertUnitOperation(client, organizationId, body));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'unit_operation', resource_id: created.id,
        changes: { before: null, after: created },
      });
      return created;
    });
    return reply.status(201).send(unitOperation);
  });

  app.put('/api/v1/unit-operations/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update a unit operation',
      description: 'Fields left out keep their value; null clears a time. The resulting times must form a valid range, '
        + 'and must not overlap another unit operation on the same equipment (409).',
      params: idParamsSchema, body: unitOperationUpdateSchema, response: { 200: unitOperationSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const after = await withTransaction(deps.pg, async (client) => {
      const existing = await requireUnitOperation(client, organizationId, request.params.id, { lock: 'update' });
      await refuseLockedRun(client, organizationId, existing.run_id);
      if (body.run_id !== undefined && body.run_id !== existing.run_id) {
        await requireRun(client, organizationId, body.run_id, { lock: 'share' });
        await refuseLockedRun(client, organizationId, body.run_id);
      }
      if (body.equipment_id !== undefined && body.equipment_id !== existing.equipment_id) {
        await requireEquipment(client, organizationId, body.equipment_id, { lock: 'update' });
      }
      const startTime = mergeTime(body.start_time, existing.start_time);
      const endTime = mergeTime(body.end_time, existing.end_time);
      const rangeError = dateRangeError(startTime, endTime);
      if (rangeError) throw badRequest(rangeError);
      const equipmentId = body.equipment_id ?? existing.equipment_id;
      if (equipmentId !== null) {
        await refuseOverlap(client, { organizationId, equipmentId, startTime, endTime, excludeId: existing.id });
      }
      const updated = toUnitOperation(await updateUnitOperation(client, organizationId, existing.id, {
        run_id: body.run_id ?? existing.run_id,
        type: body.type ?? existing.type,
        equipment_id: equipmentId,
        start_time: startTime,
        end_time: endTime,
        properties: mergeProperties(existing.properties, body.properties),
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'unit_operation', resource_id: updated.id,
        changes: { before: toUnitOperation(existing), after: updated },
      });
      return updated;
    });
    return after;
  });

  app.get('/api/v1/unit-operations/window-check', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'Would an upload whose readings span first_reading..last_reading fit on the equipment?',
      description: 'The window the unit operation (unit_operation_id, or a new one on equipment_id with start_time and end_time) '
        + 'would hold after the upload, and the unit operation on the same equipment it would overlap, named in the message '
        + '(conflict null: it fits). An open end closes at last_reading unless close_open_end=false. Nothing is changed; '
        + 'the upload checks again.',
      querystring: windowCheckQuerySchema, response: { 200: windowCheckSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return checkUploadWindow(deps, organizationId, request.query);
  });

  app.get('/api/v1/unit-operations/:id/instruments-with-data', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'The instruments holding readings in the unit operation\'s window, with counts and the first and last reading',
      description: 'Only instruments of its equipment with at least one reading the unit operation owns (inside its window, outside '
        + 'any other unit operation\'s), in the equipment\'s order; counted from the rollups. Empty without a start or equipment.',
      params: idParamsSchema, response: { 200: instrumentsWithDataSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return instrumentsWithData(deps, await requireUnitOperation(deps.pg, organizationId, request.params.id));
  });

  app.get('/api/v1/unit-operations/:id/deletion-preview', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'What deleting the unit operation (or replacing its readings) would remove',
      description: 'A dry run: the readings per instrument that deleting the unit operation would remove, inside its own window '
        + 'minus any other unit operation\'s window on the same equipment. With instrument_ids, only those instruments: what an upload '
        + 'replacing their readings would remove. Nothing is changed.',
      params: idParamsSchema, querystring: deletionPreviewQuerySchema, response: { 200: deletionPreviewSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
    return deletionPreview(deps, unitOperation, request.query.instrument_ids ?? null);
  });

  app.delete('/api/v1/unit-operations/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Delete a unit operation',
      description: 'Also deletes its comments and the readings of its equipment\'s instruments inside its own window (never '
        + 'inside another unit operation\'s window; nothing for a unit operation without a start). '
        + 'GET /api/v1/unit-operations/{id}/deletion-preview answers what would go.',
      params: idParamsSchema, response: { 204: z.null(), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const deleted = await withTransaction(deps.pg, async (client) => {
      await refuseLockedUnitOperation(client, organizationId, request.params.id);
      const row = await deleteUnitOperation(client, organizationId, request.params.id);
      if (!row) throw notFound(UNIT_OPERATION_NOT_FOUND);
      await recordUnitOperationsDeleted(client, request, [row]);
      return row;
    });
    await afterUnitOperationsDeleted(deps, request, [deleted]);
    return reply.status(204).send(null);
  });
}
