/**
 * The golden-batch band a reading of a running unit operation is compared with, on aligned time: the
 * envelope Analyze computes for a saved golden batch (analysis/envelope.ts, with its statistics cache)
 * and the target's time zero as Analyze aligns it (analysis/alignment.ts). Both are kept here for a
 * while, so a stream of readings costs one envelope per golden batch and parameter, not one per reading.
 */
import { MIN_CONTRIBUTING_RUNS, type EnvelopePoint } from '@bioprocess/shared/analysis';
import type { AppDeps } from '../platform/deps.ts';
import { envelopeOf, type EnvelopeDefinition } from '../analysis/envelope.ts';
import { alignUnitOperations } from '../analysis/alignment.ts';
import { chooseInstruments, loadUnitOperations } from '../analysis/unit-operations.ts';
import { gridOrigin } from '../analysis/resample.ts';
import { requireGoldenBatch, toGoldenBatch } from '../golden-batches/repository.ts';
import { awaitOwedRollups } from '../timeseries/rollup-backlog.ts';

type Deps = Pick<AppDeps, 'pg' | 'clickhouse'>;

export interface Band {
  stepMs: number;
  /** Grid index -> the compared band there (only where enough references contribute). */
  cells: Map<number, { lower: number; upper: number }>;
}

/** How long an envelope is reused: references grow rarely, and a saved batch's statistics are cached below it anyway. */
const ENVELOPE_TTL_MS = 10 * 60_000;
/** How long a target's time zero is reused: an event comment may be written while the run goes on. */
const TIME_ZERO_TTL_MS = 60_000;

export class GoldenBands {
  private readonly envelopes = new Map<string, { at: number; band: Band | null }>();
  private readonly timeZeros = new Map<number, { at: number; ms: number | null }>();

  constructor(private readonly deps: Deps, private readonly now: () => number = Date.now) {}

  /** The band of a golden batch for an instrument type; null when the batch has no such parameter or no band. */
  async band(organizationId: number, goldenBatchId: number, parameter: string): Promise<Band | null> {
    const batch = toGoldenBatch(await requireGoldenBatch(this.deps.pg, organizationId, goldenBatchId));
    const key = `${goldenBatchId}:${batch.updated_at}:${parameter}`;
    const kept = this.envelopes.get(key);
    if (kept && this.now() - kept.at < ENVELOPE_TTL_MS) return kept.band;
    let band: Band | null = null;
    // The envelope reads the references' rollups: computed while some are still owed (references
    // posted a moment ago), it would miss cells and, kept for minutes, miss every firing they hold.
    const settled = await awaitOwedRollups(this.deps.pg, organizationId);
    if (batch.parameters.includes(parameter)) {
      const definition: EnvelopeDefinition = {
        referenceIds: batch.reference_unit_operation_ids, alignment: batch.alignment, gridStepSeconds: batch.grid_step_seconds,
        band: batch.band, showMinMax: false, overrides: batch.instrument_overrides, tolerances: batch.tolerances,
        skipMissingReferences: true, cacheStatistics: true,
      };
      const envelope = await envelopeOf(this.deps, organizationId, definition, parameter);
      const stepMs = envelope.grid_step_seconds * 1000;
      band = { stepMs, cells: bandCells(envelope.points, stepMs) };
    }
    if (settled) this.envelopes.set(key, { at: this.now(), band });
    return band;
  }

  /** The time zero of a target unit operation under the golden batch's alignment; null when it has none yet. */
  async timeZero(organizationId: number, goldenBatchId: number, unitOperationId: number): Promise<number | null> {
    const kept = this.timeZeros.get(unitOperationId);
    if (kept && kept.ms !== null && this.now() - kept.at < TIME_ZERO_TTL_MS) return kept.ms;
    const batch = toGoldenBatch(await requireGoldenBatch(this.deps.pg, organizationId, goldenBatchId));
    const targets = await loadUnitOperations(this.deps.pg, organizationId, [unitOperationId], { nowMs: this.now(), skipMissing: true });
    if (targets.length === 0) return null;
    const choice = await chooseInstruments(this.deps.pg, organizationId, targets, []);
    const aligned = await alignUnitOperations(this.deps, organizationId, targets, choice, batch.alignment);
    const ms = aligned.timeZeroMs.get(unitOperationId) ?? null;
    this.timeZeros.set(unitOperationId, { at: this.now(), ms });
    return ms;
  }
}

function bandCells(points: readonly EnvelopePoint[], stepMs: number): Band['cells'] {
  const cells: Band['cells'] = new Map();
  for (const point of points) {
    if (point.count < MIN_CONTRIBUTING_RUNS || point.compared_lower === null || point.compared_upper === null) continue;
    cells.set(Math.round((point.t * 1000) / stepMs), { lower: point.compared_lower, upper: point.compared_upper });
  }
  return cells;
}

/** Whether a reading at `ts` lies outside the band on the grid of its time zero; null where there is no band. */
export function outsideBand(band: Band, timeZeroMs: number, ts: number, value: number): boolean | null {
  const origin = gridOrigin(timeZeroMs, band.stepMs);
  const cell = band.cells.get(Math.floor((ts - origin) / band.stepMs));
  if (!cell) return null;
  return value < cell.lower || value > cell.upper;
}
