/** Instruments (spec/02 §3, §7): the sensors and assays of a piece of equipment. */
import { z } from 'zod';
import {
  errorResponseSchema,
  idParamsSchema,
  instrumentCreateSchema,
  instrumentSchema,
  instrumentUpdateSchema,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { notFound } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { queueInstrumentSeriesDeletion } from '../timeseries/instrument-series.ts';
import { requireEquipment } from '../equipment/store.ts';
import {
  assertInstrumentNameFree,
  INSTRUMENT_COLUMNS,
  INSTRUMENT_NOT_FOUND,
  requireInstrument,
  rethrowDuplicateName,
  toInstrument,
  type InstrumentRow,
} from './store.ts';

const tags = ['Instruments'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };
const duplicateNameNote = 'A name already used by an instrument of the same equipment (case-insensitively) answers 409.';

export async function instrumentRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/instruments', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List instruments', description: `In creation order. ${LIST_QUERY_DESCRIPTION}`,
      querystring: listQuerySchema,
      response: { 200: z.array(instrumentSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const { limit, offset } = request.query;
    const [list, count] = await Promise.all([
      deps.pg.query<InstrumentRow>(
        `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [organizationId, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM instruments WHERE organization_id = $1', [organizationId]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toInstrument);
  });

  app.get('/api/v1/equipment/:id/instruments', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List the instruments of one equipment', description: `In creation order. ${LIST_QUERY_DESCRIPTION}`,
      params: idParamsSchema, querystring: listQuerySchema,
      response: { 200: z.array(instrumentSchema), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const equipment = await requireEquipment(deps.pg, organizationId, request.params.id);
    const { limit, offset } = request.query;
    const [list, count] = await Promise.all([
      deps.pg.query<InstrumentRow>(
        `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE equipment_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [equipment.id, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM instruments WHERE equipment_id = $1', [equipment.id]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toInstrument);
  });

  app.get('/api/v1/instruments/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get an instrument', params: idParamsSchema, response: { 200: instrumentSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toInstrument(await requireInstrument(deps.pg, organizationId, request.params.id));
  });

  app.post('/api/v1/instruments', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create an instrument', description: `Answers the created instrument. ${duplicateNameNote}`,
      body: instrumentCreateSchema, response: { 201: instrumentSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const instrument = await withTransaction(deps.pg, async (client) => {
      await requireEquipment(client, organizationId, body.equipment_id, { lock: 'share' });
      await assertInstrumentNameFree(client, body.equipment_id, body.name, null);
      const { rows } = await client.query<InstrumentRow>(
        `INSERT INTO instruments (organization_id, equipment_id, name, type, unit, alias)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${INSTRUMENT_COLUMNS}`,
        [organizationId, body.equipment_id, body.name, body.type, body.unit ?? null, body.alias ?? null],
      );
      const created = toInstrument(rows[0]!);
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'instrument', resource_id: created.id,
        changes: { before: null, after: created },
      });
      return created;
    }).catch(rethrowDuplicateName);
    return reply.status(201).send(instrument);
  });

  app.put('/api/v1/instruments/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update an instrument',
      description: `Fields left out keep their value (the CSV upload sends only the alias). Answers the instrument. ${duplicateNameNote}`,
      params: idParamsSchema, body: instrumentUpdateSchema, response: { 200: instrumentSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const after = await withTransaction(deps.pg, async (client) => {
      const existing = await requireInstrument(client, organizationId, request.params.id, { lock: 'update' });
      const equipmentId = body.equipment_id ?? existing.equipment_id;
      const name = body.name ?? existing.name;
      if (equipmentId !== existing.equipment_id) await requireEquipment(client, organizationId, equipmentId, { lock: 'share' });
      if (equipmentId !== existing.equipment_id || name.toLowerCase() !== existing.name.toLowerCase()) {
        await assertInstrumentNameFree(client, equipmentId, name, existing.id);
      }
      const { rows } = await client.query<InstrumentRow>(
        `UPDATE instruments SET equipment_id = $3, name = $4, type = $5, unit = $6, alias = $7, updated_at = now()
          WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
        [
          existing.id, organizationId, equipmentId, name,
          body.type ?? existing.type,
          body.unit !== undefined ? body.unit : existing.unit,
          body.alias !== undefined ? body.alias : existing.alias,
        ],
      );
      const updated = toInstrument(rows[0]!);
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'instrument', resource_id: updated.id,
        changes: { before: toInstrument(existing), after: updated },
      });
      return updated;
    }).catch(rethrowDuplicateName);
    return after;
  });

  app.delete('/api/v1/instruments/:id', {
    config: { access: 'edit' },
    schema: { tags, summary: 'Delete an instrument', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const deleted = await withTransaction(deps.pg, async (client) => {
      const { rows } = await client.query<InstrumentRow>(
        `DELETE FROM instruments WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
        [request.params.id, organizationId],
      );
      if (!rows[0]) throw notFound(INSTRUMENT_NOT_FOUND);
      const before = toInstrument(rows[0]);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'instrument', resource_id: before.id, changes: { before, after: null },
      });
      return rows[0];
    });
    await queueInstrumentSeriesDeletion(deps, request, deleted);
    return reply.status(204).send(null);
  });
}
