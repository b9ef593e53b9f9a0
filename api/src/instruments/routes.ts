/** Instrument routes: the sensors and assays of a piece of equipment; the SQL is shared/src/server/instruments-repository.ts. */
import { z } from 'zod';
import {
  errorResponseSchema,
  idParamsSchema,
  instrumentCreateSchema,
  instrumentSchema,
  instrumentUpdateSchema,
  type Instrument,
  type InstrumentCreate,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction, type PoolClient } from '@bioprocess/shared/server/postgres';
import type { FastifyRequest } from 'fastify';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict, notFound } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { queueInstrumentSeriesDeletion } from '../timeseries/instrument-series.ts';
import { requireEquipment } from '../equipment/repository.ts';
import { CATALOGUE_MESSAGES } from '@bioprocess/shared/instruments/catalogue';
import { resolveInstrumentType } from '../instrument-catalogue/repository.ts';
import {
  deleteInstrument, insertInstrument, listEquipmentInstruments, updateInstrument,
} from '@bioprocess/shared/server/instruments-repository';
import {
  assertInstrumentNameFree, INSTRUMENT_NOT_FOUND, listInstruments, requireInstrument, rethrowDuplicateName, toInstrument,
} from './repository.ts';

const tags = ['Instruments'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };
const duplicateNameNote = 'A name already used by an instrument of the same equipment (case-insensitively) answers 409. '
  + "The type is one of the instrument types or the organisation's own (GET /api/v1/instrument-catalogue); the unit one of the units or any UCUM code.";

/** At most this many instruments in one bulk create: two 384-well plates with their temperatures. */
const INSTRUMENTS_PER_BULK = 800;
const instrumentBulkCreateSchema = z.object({ instruments: z.array(instrumentCreateSchema).min(1).max(INSTRUMENTS_PER_BULK) }).strict();

/** Creates one instrument in the caller's transaction, audited. */
async function createInstrument(client: PoolClient, request: FastifyRequest, organizationId: number, body: InstrumentCreate): Promise<Instrument> {
  await requireEquipment(client, organizationId, body.equipment_id, { lock: 'share' });
  await assertInstrumentNameFree(client, organizationId, body.equipment_id, body.name, null);
  const type = await requireInstrumentType(client, organizationId, body.type);
  const created = toInstrument(await insertInstrument(client, organizationId, {
    equipment_id: body.equipment_id, name: body.name, type, unit: body.unit || null, alias: body.alias ?? null,
    draw_as_steps: body.draw_as_steps,
  }));
  await recordAudit(client, request, {
    event_type: 'data', action: 'create', resource_type: 'instrument', resource_id: created.id,
    changes: { before: null, after: created },
  });
  return created;
}

async function requireInstrumentType(client: Parameters<typeof resolveInstrumentType>[0], organizationId: number, type: string): Promise<string> {
  const resolved = await resolveInstrumentType(client, organizationId, type);
  if (resolved === null) throw badRequest(CATALOGUE_MESSAGES.unknownType(type));
  return resolved;
}

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
    const page = await listInstruments(deps.pg, organizationId, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toInstrument);
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
    const page = await listEquipmentInstruments(deps.pg, organizationId, equipment.id, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toInstrument);
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
    const instrument = await withTransaction(deps.pg, (client) => createInstrument(client, request, organizationId, request.body)).catch(rethrowDuplicateName);
    return reply.status(201).send(instrument);
  });

  app.post('/api/v1/instruments/bulk', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create many instruments at once (a plate, parallel reactors)',
      description: `All or nothing: either every instrument is created, in the order given, or none is. Answers them in that order. At most ${INSTRUMENTS_PER_BULK} at once. `
        + `A name used twice in the request, or already on its equipment, answers 409 naming it. ${duplicateNameNote}`,
      body: instrumentBulkCreateSchema, response: { 201: z.array(instrumentSchema), 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const { instruments } = request.body;
    const seen = new Map<string, number>();
    instruments.forEach((instrument, index) => {
      const key = `${instrument.equipment_id}:${instrument.name.toLowerCase()}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) throw conflict(`instruments[${index}].name: '${instrument.name}' is also instruments[${earlier}]'s name on the same equipment`);
      seen.set(key, index);
    });
    const created = await withTransaction(deps.pg, async (client) => {
      const answers = [];
      for (const [index, body] of instruments.entries()) {
        answers.push(await createInstrument(client, request, organizationId, body).catch((error: unknown) => {
          const status = (error as { statusCode?: number }).statusCode;
          if (status && status < 500) (error as Error).message = `instruments[${index}] ('${body.name}'): ${(error as Error).message}`;
          throw error;
        }));
      }
      return answers;
    }).catch(rethrowDuplicateName);
    return reply.status(201).send(created);
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
        await assertInstrumentNameFree(client, organizationId, equipmentId, name, existing.id);
      }
      const updated = toInstrument(await updateInstrument(client, organizationId, existing.id, {
        equipment_id: equipmentId,
        name,
        // An unchanged type stays valid though its organisation has since removed it from the catalogue.
        type: body.type === undefined || body.type === existing.type ? existing.type : await requireInstrumentType(client, organizationId, body.type),
        unit: body.unit !== undefined ? body.unit || null : existing.unit,
        alias: body.alias !== undefined ? body.alias : existing.alias,
        draw_as_steps: body.draw_as_steps ?? existing.draw_as_steps,
      }));
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
      const row = await deleteInstrument(client, organizationId, request.params.id);
      if (!row) throw notFound(INSTRUMENT_NOT_FOUND);
      const before = toInstrument(row);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'instrument', resource_id: before.id, changes: { before, after: null },
      });
      return row;
    });
    // Posts naming it are refused from the answer on, not from its change's notification.
    deps.accessCaches.forgetAll();
    await queueInstrumentSeriesDeletion(deps, request, deleted);
    return reply.status(204).send(null);
  });
}
