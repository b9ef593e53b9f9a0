/** Golden batches: saved envelope definitions a unit operation of their type is compared with. */
import { z } from 'zod';
import {
  ANALYSIS_MESSAGES, derivedParameterIdOf, goldenBatchCreateSchema, goldenBatchListQuerySchema, goldenBatchSchema, goldenBatchUpdateSchema, type GoldenBatch,
} from '@bioprocess/shared/analysis';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { chooseInstruments, loadUnitOperations } from '../analysis/unit-operations.ts';
import { requireDerivedParameter } from '../derived/repository.ts';
import { deleteGoldenBatch, insertGoldenBatch, listGoldenBatches, requireGoldenBatch, toGoldenBatch, updateGoldenBatch } from './repository.ts';

const tags = ['Golden batches'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

type Definition = Omit<GoldenBatch, 'id' | 'organization_id' | 'created_at' | 'updated_at'>;

/** References, override instruments and derived parameters must be the organisation's (else 404), references of the batch's type. */
async function checkDefinition(deps: AppDeps, organizationId: number, definition: Definition): Promise<void> {
  const references = await loadUnitOperations(deps.pg, organizationId, definition.reference_unit_operation_ids, { nowMs: Date.now() });
  if (references.some((reference) => reference.type !== definition.unit_operation_type)) throw badRequest(ANALYSIS_MESSAGES.mixedTypes);
  await chooseInstruments(deps.pg, organizationId, references, definition.instrument_overrides);
  const unknown = Object.keys(definition.tolerances).filter((parameter) => !definition.parameters.includes(parameter));
  if (unknown.length > 0) throw badRequest(ANALYSIS_MESSAGES.toleranceNotAParameter(unknown[0]!));
  for (const parameter of new Set(definition.parameters)) {
    const id = derivedParameterIdOf(parameter);
    if (id !== null) await requireDerivedParameter(deps.pg, organizationId, id);
  }
}

export async function goldenBatchRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/golden-batches', {
    config: { access: 'read' },
    schema: { tags, summary: 'List golden batches', querystring: goldenBatchListQuerySchema, response: { 200: z.array(goldenBatchSchema), 400: errorResponseSchema } },
  }, async (request) => listGoldenBatches(deps.pg, principalOf(request).organizationId, request.query.unit_operation_type));

  app.get('/api/v1/golden-batches/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a golden batch', params: idParamsSchema, response: { 200: goldenBatchSchema, ...errors } },
  }, async (request) => toGoldenBatch(await requireGoldenBatch(deps.pg, principalOf(request).organizationId, request.params.id)));

  app.post('/api/v1/golden-batches', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Save a golden batch', description: 'References (two or more unit operations of the type), parameters (instrument types or derived:<id>), alignment, band and tolerances (the least half-width of the band per parameter; a parameter left out takes its default from the references\' noise).',
      body: goldenBatchCreateSchema, response: { 201: goldenBatchSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await checkDefinition(deps, organizationId, request.body);
    const created = await withTransaction(deps.pg, async (client) => {
      const batch = await insertGoldenBatch(client, organizationId, request.body);
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'golden_batch', resource_id: batch.id, changes: { before: null, after: batch },
      });
      return batch;
    });
    return reply.status(201).send(created);
  });

  app.put('/api/v1/golden-batches/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Update a golden batch', description: 'Fields left out keep their value.',
      params: idParamsSchema, body: goldenBatchUpdateSchema, response: { 200: goldenBatchSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return withTransaction(deps.pg, async (client) => {
      const before = toGoldenBatch(await requireGoldenBatch(client, organizationId, request.params.id, { lock: 'update' }));
      const { id: _id, organization_id: _organization, created_at: _created, updated_at: _updated, ...stored } = before;
      const merged: Definition = { ...stored, ...request.body };
      // Parameters taken out of the batch take their tolerances with them, unless the tolerances are set anew.
      if (request.body.parameters && !request.body.tolerances) {
        merged.tolerances = Object.fromEntries(Object.entries(stored.tolerances).filter(([parameter]) => merged.parameters.includes(parameter)));
      }
      await checkDefinition(deps, organizationId, merged);
      const after = await updateGoldenBatch(client, organizationId, before.id, merged);
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'golden_batch', resource_id: after.id, changes: { before, after },
      });
      return after;
    });
  });

  app.delete('/api/v1/golden-batches/:id', {
    config: { access: 'edit' },
    schema: { tags, summary: 'Delete a golden batch', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const before = toGoldenBatch(await requireGoldenBatch(client, organizationId, request.params.id, { lock: 'update' }));
      await deleteGoldenBatch(client, organizationId, before.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'golden_batch', resource_id: before.id, changes: { before, after: null },
      });
    });
    return reply.status(204).send(null);
  });
}
