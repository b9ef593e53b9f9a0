/** Facility routes: where equipment stands and runs take place; the queries live in repository.ts. */
import { z } from 'zod';
import {
  errorResponseSchema,
  facilityCreateSchema,
  facilitySchema,
  facilityUpdateSchema,
  idParamsSchema,
} from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import {
  countFacilityDependents, deleteFacility, insertFacility, listFacilities, plural, requireFacility, rethrowForeignKeyViolation,
  toFacility, updateFacility,
} from './repository.ts';

const tags = ['Facilities'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

export async function facilityRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/facilities', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List facilities', description: `In creation order. ${LIST_QUERY_DESCRIPTION}`,
      querystring: listQuerySchema,
      response: { 200: z.array(facilitySchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const page = await listFacilities(deps.pg, organizationId, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toFacility);
  });

  app.get('/api/v1/facilities/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a facility', params: idParamsSchema, response: { 200: facilitySchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toFacility(await requireFacility(deps.pg, organizationId, request.params.id));
  });

  app.post('/api/v1/facilities', {
    config: { access: 'create' },
    schema: { tags, summary: 'Create a facility', body: facilityCreateSchema, response: { 201: facilitySchema, 400: errorResponseSchema } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const facility = await withTransaction(deps.pg, async (client) => {
      const created = toFacility(await insertFacility(client, organizationId, {
        name: body.name, type: body.type, country: body.country ?? null, address: body.address ?? null,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'facility', resource_id: created.id,
        changes: { before: null, after: created },
      });
      return created;
    });
    return reply.status(201).send(facility);
  });

  app.put('/api/v1/facilities/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update a facility', description: 'Fields left out keep their value.',
      params: idParamsSchema, body: facilityUpdateSchema, response: { 200: facilitySchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const after = await withTransaction(deps.pg, async (client) => {
      const existing = await requireFacility(client, organizationId, request.params.id, { lock: 'update' });
      const updated = toFacility(await updateFacility(client, organizationId, existing.id, {
        name: body.name ?? existing.name,
        type: body.type ?? existing.type,
        country: body.country !== undefined ? body.country : existing.country,
        address: body.address !== undefined ? body.address : existing.address,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'facility', resource_id: updated.id,
        changes: { before: toFacility(existing), after: updated },
      });
      return updated;
    });
    return after;
  });

  app.delete('/api/v1/facilities/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Delete a facility',
      description: 'Refused with 409 while equipment or runs still belong to the facility.',
      params: idParamsSchema, response: { 204: z.null(), 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = await requireFacility(client, organizationId, request.params.id, { lock: 'update' });
      // Counted inside the transaction that deletes, so the 409 names what blocks the delete now.
      const { equipment, runs } = await countFacilityDependents(client, existing.id);
      if (equipment > 0 || runs > 0) {
        const parts = [equipment > 0 ? plural(equipment, 'equipment', 'equipment') : null, runs > 0 ? plural(runs, 'run') : null];
        throw conflict(`Facility is used by ${parts.filter(Boolean).join(' and ')}; delete or move them first.`);
      }
      await deleteFacility(client, organizationId, existing.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'facility', resource_id: existing.id,
        changes: { before: toFacility(existing), after: null },
      });
    }).catch(rethrowForeignKeyViolation('Facility is still used by equipment or runs; delete or move them first.'));
    return reply.status(204).send(null);
  });
}

