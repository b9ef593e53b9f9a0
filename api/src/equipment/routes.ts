/** Equipment (spec/02 §3, §7): bioreactors, centrifuges, skids... each standing in a facility. */
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
import { plural, requireFacility, rethrowForeignKeyViolation } from '../facilities/store.ts';
import { EQUIPMENT_COLUMNS, requireEquipment, toEquipment, type EquipmentRow } from './store.ts';

const tags = ['Equipment'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

/** Equipment starts in service (spec/02 §3); the status column is kept for the console's table. */
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
    const { limit, offset } = request.query;
    const [list, count] = await Promise.all([
      deps.pg.query<EquipmentRow>(
        `SELECT ${EQUIPMENT_COLUMNS} FROM equipment WHERE organization_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [organizationId, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM equipment WHERE organization_id = $1', [organizationId]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toEquipment);
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
      const { rows } = await client.query<EquipmentRow>(
        `INSERT INTO equipment (organization_id, facility_id, name, type, oem, status)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${EQUIPMENT_COLUMNS}`,
        [organizationId, body.facility_id, body.name, body.type, body.oem ?? null, INITIAL_EQUIPMENT_STATUS],
      );
      const created = toEquipment(rows[0]!);
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
      const { rows } = await client.query<EquipmentRow>(
        `UPDATE equipment SET facility_id = $3, name = $4, type = $5, oem = $6, status = $7, updated_at = now()
          WHERE id = $1 AND organization_id = $2 RETURNING ${EQUIPMENT_COLUMNS}`,
        [
          existing.id, organizationId,
          body.facility_id ?? existing.facility_id,
          body.name ?? existing.name,
          body.type ?? existing.type,
          body.oem !== undefined ? body.oem : existing.oem,
          body.status ?? existing.status,
        ],
      );
      const updated = toEquipment(rows[0]!);
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
      const { rows } = await client.query<{ instruments: number; unit_operations: number }>(
        `SELECT (SELECT count(*) FROM instruments WHERE equipment_id = $1) AS instruments,
                (SELECT count(*) FROM unit_operations WHERE equipment_id = $1) AS unit_operations`,
        [existing.id],
      );
      const { instruments, unit_operations: unitOperations } = rows[0]!;
      if (instruments > 0 || unitOperations > 0) {
        const parts = [
          instruments > 0 ? plural(instruments, 'instrument') : null,
          unitOperations > 0 ? plural(unitOperations, 'unit operation') : null,
        ];
        throw conflict(`Equipment is used by ${parts.filter(Boolean).join(' and ')}; delete or move them first.`);
      }
      await client.query('DELETE FROM equipment WHERE id = $1 AND organization_id = $2', [existing.id, organizationId]);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'equipment', resource_id: existing.id,
        changes: { before: toEquipment(existing), after: null },
      });
    }).catch(rethrowForeignKeyViolation('Equipment is still used by instruments or unit operations; delete or move them first.'));
    return reply.status(204).send(null);
  });
}
