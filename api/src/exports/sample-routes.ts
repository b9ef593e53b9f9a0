/**
 * The sample file of a unit operation or run (CSV long or wide): the samples' own file beside the
 * time-series export (whose XLSX carries them as sheets). Editors and admins, as every export; another
 * organisation's unit operation or run is 404. Audited once delivered, as `samples.exported`.
 */
import { sampleExportQuerySchema } from '@bioprocess/shared/samples';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { streamBudgetOf } from '../platform/stream-budget.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';
import { requireRun } from '../runs/repository.ts';
import { auditAfter, download, reportingEnd } from './routes.ts';
import { loadSamplesOf, sampleCsv } from './samples.ts';

export async function sampleExportRoutes(app: App, deps: AppDeps): Promise<void> {
  const streamBudget = streamBudgetOf(deps);
  app.get('/api/v1/exports/samples', {
    config: { access: 'export' },
    schema: {
      tags: ['exports'],
      summary: 'The samples of a unit operation or run as CSV: long (one row per result, flag and limit apart from the value) '
        + 'or wide (one row per sample, a column per analyte and unit, flags written "< 0.5", as the samples grid pastes it)',
      querystring: sampleExportQuerySchema,
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const { unit_operation_id: unitOperationId, run_id: runId, format } = request.query;
    if (unitOperationId !== undefined) await requireUnitOperation(deps.pg, principal.organizationId, unitOperationId);
    else await requireRun(deps.pg, principal.organizationId, runId!);
    const samples = await loadSamplesOf(deps.pg, principal.organizationId, unitOperationId !== undefined ? { ids: [unitOperationId] } : { runId: runId! });
    const tally = { rows: 0 };
    const resourceType = unitOperationId !== undefined ? 'unit_operation' : 'run';
    const resourceId = unitOperationId ?? runId!;
    const onEnd = auditAfter(request, deps, (error) => ({
      event_type: 'samples.exported', action: 'export', resource_type: resourceType, resource_id: resourceId, success: error === null,
      changes: { after: { format, samples: samples.samples.length, rows: tally.rows, complete: error === null } },
    }));
    const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
    const fileName = `${resourceType.replace('_', '-')}-${resourceId}-${stamp}-samples-${format.slice(4)}.csv`;
    const slot = streamBudget.admit(principal.organizationId, reply);
    return download(reply, 'text/csv; charset=utf-8', fileName).send(slot.stream(reportingEnd(sampleCsv(samples, format, tally), onEnd)));
  });
}
