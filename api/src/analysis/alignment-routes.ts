/** The time zeros of unit operations under an alignment (read-only): what Compare runs overlays on. */
import { alignmentRequestSchema, alignmentResultSchema } from '@bioprocess/shared/analysis-alignment';
import { errorResponseSchema } from '@bioprocess/shared/entities';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { alignUnitOperations } from './alignment.ts';
import { chooseInstruments, loadUnitOperations } from './unit-operations.ts';

const tags = ['Analysis'];

export async function alignmentRoutes(app: App, deps: AppDeps): Promise<void> {
  app.post('/api/v1/analysis/alignment', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'Time zero of each unit operation under an alignment',
      description: 'Per unit operation, the instant its process time starts: its start, the first comment on it naming a word (whole word, any case), '
        + 'or the first time a parameter (the instrument of that type on its equipment, or an override) crosses a value upward or downward. '
        + 'Unit operations without their event, start or instrument are listed in left_out with the reason. Ids of another organisation answer 404.',
      body: alignmentRequestSchema, response: { 200: alignmentResultSchema, 400: errorResponseSchema, 404: errorResponseSchema },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const unitOperations = await loadUnitOperations(deps.pg, organizationId, body.unit_operation_ids, { nowMs: Date.now() });
    const choice = await chooseInstruments(deps.pg, organizationId, unitOperations, body.instrument_overrides);
    const { timeZeroMs, leftOut } = await alignUnitOperations(deps, organizationId, unitOperations, choice, body.alignment);
    const aligned = unitOperations.flatMap((unitOperation) => {
      const at = timeZeroMs.get(unitOperation.id);
      return at === undefined ? [] : [{
        unit_operation_id: unitOperation.id, run_id: unitOperation.runId, run_name: unitOperation.runName, time_zero: new Date(at).toISOString(),
      }];
    });
    return { alignment: body.alignment, aligned, left_out: leftOut };
  });
}
