/**
 * GET/POST/DELETE /api/v1/instrument-catalogue: the spec's instrument types and units with the
 * organisation's own. Every member reads them (the pickers offer them); admins add and remove them.
 * Removing one leaves the instruments that use it as they are.
 */
import { z } from 'zod';
import { idParamsSchema } from '@bioprocess/shared/auth-contracts';
import { errorResponseSchema } from '@bioprocess/shared/entities';
import { INSTRUMENT_TYPES, UNITS } from '@bioprocess/shared/enums';
import {
  CATALOGUE_MESSAGES, catalogueTypeCreateSchema, catalogueTypeSchema, catalogueUnitCreateSchema, catalogueUnitSchema, instrumentCatalogueSchema,
} from '@bioprocess/shared/instruments/catalogue';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict, notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import {
  deleteCatalogueType, deleteCatalogueUnit, insertCatalogueType, insertCatalogueUnit, listCatalogueTypes, listCatalogueUnits,
} from './repository.ts';

const tags = ['Instruments'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

function rethrowTaken(message: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23505') throw conflict(message);
    throw error;
  };
}

export async function instrumentCatalogueRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/instrument-catalogue', {
    config: { access: 'read' },
    schema: {
      tags, summary: "The instrument types and units of your organisation: the spec's and your own",
      response: { 200: instrumentCatalogueSchema },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return {
      built_in_types: [...INSTRUMENT_TYPES], built_in_units: [...UNITS],
      types: await listCatalogueTypes(deps.pg, organizationId), units: await listCatalogueUnits(deps.pg, organizationId),
    };
  });

  app.post('/api/v1/instrument-catalogue/types', {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Add an instrument type of your own (admins)',
      description: 'The name must differ from the built-in types; the default unit is one of the units or a UCUM code. A name already taken (case-insensitively) answers 409.',
      body: catalogueTypeCreateSchema, response: { 201: catalogueTypeSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const created = await withTransaction(deps.pg, async (client) => {
      const entry = await insertCatalogueType(client, organizationId, request.body.name, request.body.default_unit || null);
      await recordAudit(client, request, {
        event_type: 'instrument_type.created', action: 'create', resource_type: 'instrument_type', resource_id: entry.id,
        changes: { before: null, after: { name: entry.name, default_unit: entry.default_unit } },
      });
      return entry;
    }).catch(rethrowTaken(CATALOGUE_MESSAGES.typeNameTaken));
    return reply.status(201).send(created);
  });

  app.delete('/api/v1/instrument-catalogue/types/:id', {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Remove an instrument type of your own (admins); its instruments keep it', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const removed = await deleteCatalogueType(client, organizationId, request.params.id);
      if (!removed) throw notFound(CATALOGUE_MESSAGES.typeNotFound);
      await recordAudit(client, request, {
        event_type: 'instrument_type.deleted', action: 'delete', resource_type: 'instrument_type', resource_id: removed.id,
        changes: { before: { name: removed.name, default_unit: removed.default_unit }, after: null },
      });
    });
    return reply.status(204).send(null);
  });

  app.post('/api/v1/instrument-catalogue/units', {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Add a unit of your own (admins)',
      description: 'The code must be a UCUM code (validated with the UCUM library; a 400 names a code that is not) and not one of the built-in units. A code already added answers 409.',
      body: catalogueUnitCreateSchema, response: { 201: catalogueUnitSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const created = await withTransaction(deps.pg, async (client) => {
      const entry = await insertCatalogueUnit(client, organizationId, request.body.code, request.body.label);
      await recordAudit(client, request, {
        event_type: 'instrument_unit.created', action: 'create', resource_type: 'instrument_unit', resource_id: entry.id,
        changes: { before: null, after: { code: entry.code, label: entry.label } },
      });
      return entry;
    }).catch(rethrowTaken(CATALOGUE_MESSAGES.unitCodeTaken));
    return reply.status(201).send(created);
  });

  app.delete('/api/v1/instrument-catalogue/units/:id', {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Remove a unit of your own (admins); instruments that use it keep it', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const removed = await deleteCatalogueUnit(client, organizationId, request.params.id);
      if (!removed) throw notFound(CATALOGUE_MESSAGES.unitNotFound);
      await recordAudit(client, request, {
        event_type: 'instrument_unit.deleted', action: 'delete', resource_type: 'instrument_unit', resource_id: removed.id,
        changes: { before: { code: removed.code, label: removed.label }, after: null },
      });
    });
    return reply.status(204).send(null);
  });
}
