/** Equipment routes: bioreactors, centrifuges, skids... each standing in a facility; the queries live in repository.ts. */
import { z } from 'zod';
import {
  equipmentCreateSchema,
  equipmentSchema,
  equipmentUpdateSchema,
  errorResponseSchema,
  idParamsSchema,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { plural, requireFacility, rethrowForeignKeyViolation } from '../facilities/repository.ts';
import {
  countEquipmentDependents, deleteEquipment, insertEquipment, listEquipment, requireEquipment, toEquipment, updateEquipment,
} from './repository.ts';

const tags = ['Equipment'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

/** New equipment starts in service; the status column is kept for the console's table. */
const INITIAL_EQUIPMENT_STATUS = 1;

export async function equipmentRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/equipment', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List equipment', description: `In creation order. ${LIST_QUERY_DESCRIPTION}`,
      querystring: listQuerySchema,
      response: { 200: z.array(equipmentSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const page = await listEquipment(deps.pg, organizationId, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toEquipment);
  });

  app.get('/api/v1/equipment/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get equipment', params: idParamsSchema, response: { 200: equipmentSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toEquipment(await requireEquipment(deps.pg, organizationId, request.params.id));
  });

  app.post('/api/v1/equipment', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create equipment', description: 'The facility must belong to the organisation; status starts at 1.',
      body: equipmentCreateSchema, response: { 201: equipmentSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const equipment = await withTransaction(deps.pg, async (client) => {
      await requireFacility(client, organizationId, body.facility_id, { lock: 'share' });
      const created = toEquipment(await insertEquipment(client, organizationId, {
        facility_id: body.facility_id, name: body.name, type: body.type, oem: body.oem ?? null, status: INITIAL_EQUIPMENT_STATUS,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'equipment', resource_id: created.id,
        changes: { before: null, after: created },
      });
      return created;
    });
    return reply.status(201).send(equipment);
  });

  app.put('/api/v1/equipment/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update equipment', description: 'Fields left out keep their value.',
      params: idParamsSchema, body: equipmentUpdateSchema, response: { 200: equipmentSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const after = await withTransaction(deps.pg, async (client) => {
      const existing = await requireEquipment(client, organizationId, request.params.id, { lock: 'update' });
      if (body.facility_id !== undefined && body.facility_id !== existing.facility_id) {
        await requireFacility(client, organizationId, body.facility_id, { lock: 'share' });
      }
      const updated = toEquipment(await updateEquipment(client, organizationId, existing.id, {
        facility_id: body.facility_id ?? existing.facility_id,
        name: body.name ?? existing.name,
        type: body.type ?? existing.type,
        oem: body.oem !== undefined ? body.oem : existing.oem,
        status: body.status ?? existing.status,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'equipment', resource_id: updated.id,
        changes: { before: toEquipment(existing), after: updated },
      });
      return updated;
    });
    return after;
  });

  app.delete('/api/v1/equipment/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Delete equipment',
      description: 'Refused with 409 while instruments or unit operations still use the equipment.',
      params: idParamsSchema, response: { 204: z.null(), 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = await requireEquipment(client, organizationId, request.params.id, { lock: 'update' });
      const { instruments, unitOperations } = await countEquipmentDependents(client, organizationId, existing.id);
      if (instruments > 0 || unitOperations > 0) {
        const parts = [
          instruments > 0 ? plural(instruments, 'instrument') : null,
          unitOperations > 0 ? plural(unitOperations, 'unit operation') : null,
        ];
        throw conflict(`Equipment is used by ${parts.filter(Boolean).join(' and ')}; delete or move them first.`);
      }
      await deleteEquipment(client, organizationId, existing.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'equipment', resource_id: existing.id,
        changes: { before: toEquipment(existing), after: null },
      });
    }).catch(rethrowForeignKeyViolation('Equipment is still used by instruments or unit operations; delete or move them first.'));
    return reply.status(204).send(null);
  });
}
