/** Analyze: envelopes over reference unit operations and the deviation of targets from them (read-only). */
import { deviationRequestSchema, deviationSchema, envelopeRequestSchema, envelopeSchema, type AnalysisParameter } from '@bioprocess/shared/analysis';
import { errorResponseSchema } from '@bioprocess/shared/entities';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { requireGoldenBatch, toGoldenBatch } from '../golden-batches/repository.ts';
import { deviationOf, envelopeOf, type EnvelopeDefinition } from './envelope.ts';

const tags = ['Analysis'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema, 503: errorResponseSchema };

export async function analysisRoutes(app: App, deps: AppDeps): Promise<void> {
  app.post('/api/v1/analysis/envelope', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'Envelope of a parameter (instrument type or derived parameter) over reference unit operations',
      description: 'Aligns each reference (start, first comment naming a word, or a threshold crossing), resamples it onto a grid of seconds since time zero (the average of its readings per step) and answers per grid time the median, mean, band, min, max and the number of contributing references. References without their event are listed in left_out. A derived parameter (derived:<id>) is evaluated per reference on the grid, from the grid averages of its inputs.',
      body: envelopeRequestSchema, response: { 200: envelopeSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    return envelopeOf(deps, organizationId, {
      referenceIds: body.reference_unit_operation_ids, alignment: body.alignment, gridStepSeconds: body.grid_step_seconds ?? null,
      band: body.band, showMinMax: body.show_min_max, overrides: body.instrument_overrides, tolerances: body.tolerances,
    }, body.parameter);
  });

  app.post('/api/v1/analysis/deviation', {
    config: { access: 'read', readsRollups: true },
    schema: {
      tags, summary: 'Deviation of target unit operations from an envelope',
      description: 'Takes an envelope definition (or a saved golden batch) and targets, running ones included. The band is widened to at least a tolerance either side of its centre (set per parameter, else from the references\' noise). Per target and parameter: the share of compared grid times outside, the first, largest and longest excursion, and a score, the area outside the band in band widths x hours; a parameter is flagged from flag_score on, and the ranking lists parameters by score with the reason in words. Fewer than five references give a warning. A target is compared over the grid times the references cover. parameters "all" compares every parameter the targets share with at least two references.',
      body: deviationRequestSchema, response: { 200: deviationSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    let definition: EnvelopeDefinition;
    let parameters: readonly AnalysisParameter[] | 'all';
    if ('golden_batch_id' in body) {
      const batch = toGoldenBatch(await requireGoldenBatch(deps.pg, organizationId, body.golden_batch_id));
      definition = {
        referenceIds: batch.reference_unit_operation_ids, alignment: batch.alignment, gridStepSeconds: batch.grid_step_seconds,
        band: batch.band, showMinMax: true, overrides: batch.instrument_overrides, tolerances: batch.tolerances, skipMissingReferences: true, cacheStatistics: true,
      };
      parameters = body.parameters ?? batch.parameters;
    } else {
      definition = {
        referenceIds: body.reference_unit_operation_ids, alignment: body.alignment, gridStepSeconds: body.grid_step_seconds ?? null,
        band: body.band, showMinMax: body.show_min_max, overrides: body.instrument_overrides, tolerances: body.tolerances,
      };
      parameters = body.parameters;
    }
    return deviationOf(deps, organizationId, definition, parameters, body.target_unit_operation_ids);
  });
}
