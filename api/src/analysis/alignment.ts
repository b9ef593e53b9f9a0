/**
 * Time zero of each unit operation: its start, the first comment on it naming a word, or the first
 * crossing of a parameter's threshold. A unit operation without its event is left out, with the reason.
 */
import type { Alignment, LeftOut } from '@bioprocess/shared/analysis';
import type { AppDeps } from '../platform/deps.ts';
import { firstCrossing } from './resample.ts';
import type { AnalysedUnitOperation, InstrumentChoice } from './unit-operations.ts';

export interface Aligned {
  timeZeroMs: Map<number, number>;
  leftOut: LeftOut[];
}

export async function alignUnitOperations(
  deps: Pick<AppDeps, 'pg' | 'clickhouse'>,
  organizationId: number,
  unitOperations: readonly AnalysedUnitOperation[],
  choice: InstrumentChoice,
  alignment: Alignment,
): Promise<Aligned> {
  const timeZeroMs = new Map<number, number>();
  const leftOut: LeftOut[] = [];
  const started = unitOperations.filter((unitOperation) => {
    if (unitOperation.startMs === null) leftOut.push({ unit_operation_id: unitOperation.id, reason: 'no_start' });
    return unitOperation.startMs !== null;
  });

  if (alignment.kind === 'start') {
    for (const unitOperation of started) timeZeroMs.set(unitOperation.id, unitOperation.startMs!);
  } else if (alignment.kind === 'event') {
    // The word was checked to hold only letters, digits, spaces, hyphens and underscores, none of which
    // is special in a PostgreSQL regular expression; \m and \M make it match whole words only.
    const { rows } = await deps.pg.query<{ unit_operations_id: string; timestamp: Date }>(
      `SELECT DISTINCT ON (unit_operations_id) unit_operations_id, timestamp FROM comments
        WHERE organization_id = $1 AND unit_operations_id = ANY($2::bigint[]) AND content ~* ('\\m' || $3 || '\\M')
        ORDER BY unit_operations_id, timestamp, id`,
      [organizationId, started.map((unitOperation) => unitOperation.id), alignment.word]);
    const found = new Map(rows.map((row) => [Number(row.unit_operations_id), row.timestamp.getTime()]));
    for (const unitOperation of started) {
      const at = found.get(unitOperation.id);
      if (at === undefined) leftOut.push({ unit_operation_id: unitOperation.id, reason: 'event_not_found' });
      else timeZeroMs.set(unitOperation.id, at);
    }
  } else {
    const crossings = await Promise.all(started.map(async (unitOperation) => {
      const instrumentId = choice.get(unitOperation.id)?.get(alignment.parameter);
      if (instrumentId === undefined) return { unitOperation, at: 'no_instrument' as const };
      const at = await firstCrossing(deps.clickhouse, organizationId, instrumentId,
        { startMs: unitOperation.startMs!, endMs: unitOperation.endMs }, alignment.value, alignment.direction);
      return { unitOperation, at };
    }));
    for (const { unitOperation, at } of crossings) {
      if (at === 'no_instrument') leftOut.push({ unit_operation_id: unitOperation.id, reason: 'no_instrument' });
      else if (at === null) leftOut.push({ unit_operation_id: unitOperation.id, reason: 'event_not_found' });
      else timeZeroMs.set(unitOperation.id, at);
    }
  }
  return { timeZeroMs, leftOut };
}
