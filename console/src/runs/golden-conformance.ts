/**
 * How a run's unit operations compare with the saved golden batches of their type: which (unit
 * operation, golden batch) pairs to ask the deviation endpoint about, and per parameter whether it is
 * flagged (its excursion score, the area outside the band in band widths x hours, reached the
 * threshold), worst first, with the api's reason in words.
 */
import type { CamelDeviation } from '../analyze/analyze-model.ts';
import { parameterLabelOf } from '../analyze/analyze-model.ts';

export interface ConformancePair {
  unitOperationId: number;
  unitOperationType: string;
  goldenBatchId: number;
  goldenBatchName: string;
}

/**
 * Each unit operation that has started, with every golden batch of its type (by name). One without a
 * start, or starting later than now, has nothing to compare yet: no request is sent for it.
 */
export function conformancePairs(
  unitOperations: ReadonlyArray<{ id: number; type: string; startTime: string | null }>,
  goldenBatches: ReadonlyArray<{ id: number; name: string; unitOperationType: string }>,
  nowMs = Date.now(),
): ConformancePair[] {
  return unitOperations.flatMap((unitOperation) => {
    const startMs = unitOperation.startTime === null ? Number.NaN : Date.parse(unitOperation.startTime);
    if (!(startMs <= nowMs)) return [];
    return goldenBatches
      .filter((batch) => batch.unitOperationType === unitOperation.type)
      .map((batch) => ({ unitOperationId: unitOperation.id, unitOperationType: unitOperation.type, goldenBatchId: batch.id, goldenBatchName: batch.name }));
  });
}

export interface ConformanceRow {
  parameter: string;
  label: string;
  flagged: boolean;
  score: number;
  reason: string;
  compared: number;
}

/** The target's parameters in the deviation's ranking (by score, worst first); parameters with nothing compared last. */
export function conformanceRows(deviation: CamelDeviation, unitOperationId: number): ConformanceRow[] {
  const target = deviation.targets.find((entry) => entry.unitOperationId === unitOperationId);
  if (!target) return [];
  const byParameter = new Map(target.parameters.map((entry) => [entry.parameter, entry]));
  const rows = deviation.ranking.filter((entry) => entry.unitOperationId === unitOperationId).flatMap((entry) => {
    const result = byParameter.get(entry.parameter);
    if (!result) return [];
    return [{
      parameter: entry.parameter,
      label: parameterLabelOf(entry.parameter, [], deviation.envelopes),
      flagged: result.flagged,
      score: result.score,
      reason: result.reason,
      compared: result.compared,
    }];
  });
  return [...rows.filter((row) => row.compared > 0), ...rows.filter((row) => row.compared === 0)];
}

/** Red when flagged, green when compared and inside (or nearly), grey when nothing could be compared. */
export function conformanceIntent(row: Pick<ConformanceRow, 'flagged' | 'compared'>): 'success' | 'danger' | 'none' {
  if (row.compared === 0) return 'none';
  return row.flagged ? 'danger' : 'success';
}
