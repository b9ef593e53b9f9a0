/** Facilities (spec/02 §3, §7): where equipment stands and runs take place. */
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
import { FACILITY_COLUMNS, plural, requireFacility, rethrowForeignKeyViolation, toFacility, type FacilityRow } from './store.ts';

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
    const { limit, offset } = request.query;
    const [list, count] = await Promise.all([
      deps.pg.query<FacilityRow>(
        `SELECT ${FACILITY_COLUMNS} FROM facilities WHERE organization_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
        [organizationId, limit, offset],
      ),
      deps.pg.query<{ total: number }>('SELECT count(*) AS total FROM facilities WHERE organization_id = $1', [organizationId]),
    ]);
    reply.header(TOTAL_COUNT_HEADER, String(count.rows[0]!.total));
    return list.rows.map(toFacility);
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
      const { rows } = await client.query<FacilityRow>(
        `INSERT INTO facilities (organization_id, name, type, country, address)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${FACILITY_COLUMNS}`,
        [organizationId, body.name, body.type, body.country ?? null, body.address ?? null],
      );
      const created = toFacility(rows[0]!);
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
      const { rows } = await client.query<FacilityRow>(
        `UPDATE facilities SET name = $3, type = $4, country = $5, address = $6, updated_at = now()
          WHERE id = $1 AND organization_id = $2 RETURNING ${FACILITY_COLUMNS}`,
        [
          existing.id, organizationId,
          body.name ?? existing.name,
          body.type ?? existing.type,
          body.country !== undefined ? body.country : existing.country,
          body.address !== undefined ? body.address : existing.address,
        ],
      );
      const updated = toFacility(rows[0]!);
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
      const { rows } = await client.query<{ equipment: number; runs: number }>(
        `SELECT (SELECT count(*) FROM equipment WHERE facility_id = $1) AS equipment,
                (SELECT count(*) FROM runs WHERE facility_id = $1) AS runs`,
        [existing.id],
      );
      const { equipment, runs } = rows[0]!;
      if (equipment > 0 || runs > 0) {
        const parts = [equipment > 0 ? plural(equipment, 'equipment', 'equipment') : null, runs > 0 ? plural(runs, 'run') : null];
        throw conflict(`Facility is used by ${parts.filter(Boolean).join(' and ')}; delete or move them first.`);
      }
      await client.query('DELETE FROM facilities WHERE id = $1 AND organization_id = $2', [existing.id, organizationId]);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'facility', resource_id: existing.id,
        changes: { before: toFacility(existing), after: null },
      });
    }).catch(rethrowForeignKeyViolation('Facility is still used by equipment or runs; delete or move them first.'));
    return reply.status(204).send(null);
  });
}

