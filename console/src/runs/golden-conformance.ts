/**
 * How far each unit operation of a run is inside the band of the saved golden batches of its type:
 * which (unit operation, golden batch) pairs to ask the deviation endpoint about, and per parameter
 * the share of compared grid times inside the band, worst first.
 */
import type { CamelDeviation } from '../analyze/analyze-model.ts';
import { parameterLabelOf } from '../analyze/analyze-model.ts';

export interface ConformancePair {
  unitOperationId: number;
  unitOperationType: string;
  goldenBatchId: number;
  goldenBatchName: string;
}

/** Each unit operation with a start, with every golden batch of its type (by name). */
export function conformancePairs(
  unitOperations: ReadonlyArray<{ id: number; type: string; startTime: string | null }>,
  goldenBatches: ReadonlyArray<{ id: number; name: string; unitOperationType: string }>,
): ConformancePair[] {
  return unitOperations.flatMap((unitOperation) => (unitOperation.startTime === null ? [] : goldenBatches
    .filter((batch) => batch.unitOperationType === unitOperation.type)
    .map((batch) => ({ unitOperationId: unitOperation.id, unitOperationType: unitOperation.type, goldenBatchId: batch.id, goldenBatchName: batch.name }))));
}

export interface ConformanceRow {
  parameter: string;
  label: string;
  /** Share of compared grid times inside the band; null when no grid time could be compared. */
  shareInside: number | null;
  compared: number;
}

/** The target's parameters in the deviation's ranking (worst first); parameters with nothing compared last. */
export function conformanceRows(deviation: CamelDeviation, unitOperationId: number): ConformanceRow[] {
  const target = deviation.targets.find((entry) => entry.unitOperationId === unitOperationId);
  if (!target) return [];
  const byParameter = new Map(target.parameters.map((entry) => [entry.parameter, entry]));
  const ranked = deviation.ranking.filter((entry) => entry.unitOperationId === unitOperationId).map((entry) => entry.parameter);
  const rows = ranked.flatMap((parameter) => {
    const entry = byParameter.get(parameter);
    if (!entry) return [];
    return [{
      parameter,
      label: parameterLabelOf(parameter, [], deviation.envelopes),
      shareInside: entry.shareOutside === null ? null : 1 - entry.shareOutside,
      compared: entry.compared,
    }];
  });
  return [...rows.filter((row) => row.shareInside !== null), ...rows.filter((row) => row.shareInside === null)];
}

/** Green from 95 % inside, amber from 80 %, red below. */
export function conformanceIntent(shareInside: number | null): 'success' | 'warning' | 'danger' | 'none' {
  if (shareInside === null) return 'none';
  if (shareInside >= 0.95) return 'success';
  return shareInside >= 0.8 ? 'warning' : 'danger';
}

export function formatInside(shareInside: number | null): string {
  return shareInside === null ? 'not compared' : `${Math.floor(shareInside * 1000) / 10} % inside`;
}
