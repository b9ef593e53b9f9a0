/**
 * Sample routes: off-line and at-line results of a unit operation. Viewers read; editors save the
 * grid (many samples, all or nothing) and correct or delete one sample. Every change is audited with
 * the sample before and after. The queries live in repository.ts, the grid's rules in grid-save.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import {
  sampleGridErrorSchema, sampleGridSaveSchema, sampleSchema, sampleUpdateSchema, SAMPLE_MESSAGES, SAMPLES_PER_SAVE_MAX, type Sample,
} from '@bioprocess/shared/samples';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict, notFound } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';
import { refuseLockedSample, refuseLockedUnitOperation } from '../runs/review-lock.ts';
import { rejectInvalidGrid, SampleGridError, unitCells } from './grid-errors.ts';
import { saveSampleGrid } from './grid-save.ts';
import { ucumUnitProblem } from '@bioprocess/shared/instruments/ucum';
import {
  deleteSamples, isSampleIdTaken, isUnchanged, listUnitOperationSamples, lockUnitOperationSamples, readSamples, replaceSample,
  requireSample, toSample,
} from './repository.ts';

const tags = ['Samples'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

const SAMPLE_ID_TAKEN = 'Sample ID is already used by another sample of this unit operation.';

function auditSample(client: pg.PoolClient, request: FastifyRequest, action: string, id: number, before: Sample | null, after: Sample | null) {
  return recordAudit(client, request, { event_type: 'data', action, resource_type: 'sample', resource_id: id, changes: { before, after } });
}

/** The 409 of a sample id that a concurrent change took between our check and the commit. */
function rethrowSampleIdTaken(error: unknown): never {
  if (isSampleIdTaken(error)) throw conflict(SAMPLE_ID_TAKEN);
  throw error;
}

function sendGridError(reply: FastifyReply, error: SampleGridError) {
  return reply.status(400).send(error.cells.length > 0 ? { error: error.message, cells: error.cells } : { error: error.message });
}

export async function sampleRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/unit-operations/:id/samples', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List the samples of a unit operation', description: `By drawn time, each with its results. ${LIST_QUERY_DESCRIPTION}`,
      params: idParamsSchema, querystring: listQuerySchema,
      response: { 200: z.array(sampleSchema), ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
    const page = await listUnitOperationSamples(deps.pg, unitOperation.id, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toSample);
  });

  app.put('/api/v1/unit-operations/:id/samples', {
    config: { access: 'edit' },
    // The body is checked in the handler, so that the 400 names every bad cell rather than the first.
    attachValidation: true,
    schema: {
      tags, summary: 'Save samples from the grid',
      description:
        'All or nothing. Each row of `samples` replaces the sample named by its `id`, else the one with its `sample_id`, ' +
        'else creates one; a result list replaces the stored one. `delete_ids` deletes samples of this unit operation. ' +
        `At most ${SAMPLES_PER_SAVE_MAX} samples. A bad cell answers 400 with every bad cell in \`cells\` ` +
        '(row: 1-based position in `samples`; column: the grid header). Answers the unit operation\'s samples after the save.',
      params: idParamsSchema, body: sampleGridSaveSchema,
      response: { 200: z.array(sampleSchema), 400: sampleGridErrorSchema, 404: errorResponseSchema, 409: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    try {
      const parsed = sampleGridSaveSchema.safeParse(request.body);
      if (!parsed.success) rejectInvalidGrid(request.body, parsed.error);
      const body = parsed.data;
      const badUnits = unitCells(body.samples);
      if (badUnits.length > 0) throw new SampleGridError(badUnits);
      const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);
      const samples = await withTransaction(deps.pg, async (client) => {
        await refuseLockedUnitOperation(client, organizationId, unitOperation.id);
        await saveSampleGrid(client, organizationId, unitOperation.id, body, (action, id, before, after) => auditSample(client, request, action, id, before, after));
        return (await listUnitOperationSamples(client, unitOperation.id, { limit: Number.MAX_SAFE_INTEGER, offset: 0 })).rows.map(toSample);
      }).catch(rethrowSampleIdTaken);
      return samples;
    } catch (error) {
      if (error instanceof SampleGridError) return sendGridError(reply, error);
      throw error;
    }
  });

  app.get('/api/v1/samples/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get a sample', params: idParamsSchema, response: { 200: sampleSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return toSample(await requireSample(deps.pg, organizationId, request.params.id));
  });

  app.patch('/api/v1/samples/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Correct a sample', description: 'Fields left out keep their value; `results`, when given, replaces all of them.',
      params: idParamsSchema, body: sampleUpdateSchema, response: { 200: sampleSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    for (const [index, result] of (body.results ?? []).entries()) {
      const problem = ucumUnitProblem(result.unit);
      if (problem) throw badRequest(`results.${index}.unit: ${problem}`);
    }
    return withTransaction(deps.pg, async (client) => {
      const found = await requireSample(client, organizationId, request.params.id);
      await refuseLockedSample(client, organizationId, found.id);
      const siblings = await lockUnitOperationSamples(client, found.unit_operation_id);
      const existing = siblings.find((row) => Number(row.id) === Number(found.id));
      if (!existing) throw notFound(SAMPLE_MESSAGES.notFound);
      const values = {
        sampleId: body.sample_id ?? existing.sample_id,
        drawnAt: body.drawn_at ?? existing.drawn_at.toISOString(),
        notes: body.notes !== undefined ? body.notes : existing.notes,
        results: body.results ?? toSample(existing).results,
      };
      if (siblings.some((row) => row.sample_id === values.sampleId && Number(row.id) !== Number(existing.id))) throw conflict(SAMPLE_ID_TAKEN);
      if (isUnchanged(existing, values)) return toSample(existing);
      await replaceSample(client, organizationId, existing.id, values);
      const after = toSample((await readSamples(client, organizationId, [Number(existing.id)]))[0]!);
      await auditSample(client, request, 'update', after.id, toSample(existing), after);
      return after;
    }).catch(rethrowSampleIdTaken);
  });

  app.delete('/api/v1/samples/:id', {
    config: { access: 'edit' },
    schema: { tags, summary: 'Delete a sample', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = await requireSample(client, organizationId, request.params.id, { forUpdate: true });
      await refuseLockedSample(client, organizationId, existing.id);
      await deleteSamples(client, organizationId, [existing.id]);
      await auditSample(client, request, 'delete', existing.id, toSample(existing), null);
    });
    return reply.status(204).send(null);
  });
}
