/**
 * The off-line samples of the demo fed-batches, drawn from the very culture the probes follow (the
 * same simulation and seed): three a day as a lab does, each with a cell count and viability from a
 * flow cytometer, glucose and lactate from a metabolite analyzer and titer from HPLC. Values below a
 * method's quantitation limit are flagged with it ('< 0.05'), as the analyzers report them.
 */
import { seededRandom } from '@bioprocess/shared/seeded-random';
import type { SampleValues } from '../samples/repository.ts';
import { simulateFedBatch, simulationSeed, type FedBatchState } from './fed-batch-simulator.ts';
import { DEMO_HOUR_MS, type DemoUnitOperation } from './demo-organisation.ts';

/** Inoculation check, then every eight hours: the day, evening and night shift. */
const SAMPLE_HOURS = [0.25, 8, 16, 24, 32, 40, 48];
/** 10^9 E. coli cells per mL for each g/L of dry cell weight (about 0.3 pg per cell). */
const CELLS_PER_GRAM = 3.3;
const LIMITS = { glucose: 0.05, lactate: 0.1, titer: 0.01 } as const;
const METHODS = { cells: 'CytoFLEX live/dead', metabolites: 'Cedex Bio HT', titer: 'HPLC SEC' } as const;

interface DemoFedBatch {
  id: number;
  runName: string;
  startMs: number;
  endMs: number | null;
  feedFault?: DemoUnitOperation['feedFault'];
}

/** The run's short name ('FB-2026-031') and a two-digit sample number, as written on the tube. */
function tubeId(runName: string, index: number): string {
  return `${runName.split(' ')[0]}-S${String(index + 1).padStart(2, '0')}`;
}

function flagged(value: number, limit: number, digits: number) {
  return value < limit ? { value: limit, flag: 'below_limit' as const } : { value: Number(value.toFixed(digits)), flag: null };
}

export function demoFedBatchSamples(operation: DemoFedBatch, now: number): SampleValues[] {
  const endMs = Math.min(operation.endMs ?? now, now);
  const hours = (endMs - operation.startMs) / DEMO_HOUR_MS;
  const random = seededRandom(simulationSeed(operation.id) + 17);
  // Drawn within ten minutes of the hour, as the shift gets to the vessel (the last one before the run ends).
  const wanted = SAMPLE_HOURS.map((hour, index) => hour + ((index === 0 ? 1 : -1) * Math.round(random() * 10)) / 60).filter((hour) => hour <= hours);
  if (wanted.length === 0) return [];

  // Lactate follows the culture's glucose and oxygen, which the probes show on the chart.
  let lactate = 0;
  let previousHour = 0;
  const states: Array<FedBatchState & { lactate: number }> = [];
  simulateFedBatch({
    startMs: operation.startMs, durationHours: hours, seed: simulationSeed(operation.id),
    ...(operation.feedFault ? { feedFault: operation.feedFault } : {}),
    onStep: (state) => {
      const dt = state.hour - previousHour;
      previousHour = state.hour;
      // Overflow while glucose is in excess, a trickle otherwise, doubled while the DO probe reads low.
      const overflow = state.glucose > 1 ? 0.006 : 0.0006;
      lactate += overflow * state.biomass * (state.dissolvedO2 < 30 ? 2 : 1) * dt;
      const next = wanted[states.length];
      if (next !== undefined && state.hour >= next) states.push({ ...state, lactate });
    },
  });

  const scatter = (value: number, relative: number) => value * (1 + (random() - 0.5) * 2 * relative);
  return states.map((state, index) => {
    const sinceInduction = Math.max(0, state.hour - state.inductionHour);
    const viability = Math.min(99.5, scatter(98.6 - sinceInduction * (operation.feedFault ? 0.34 : 0.22), 0.004));
    const totalCells = scatter(state.biomass * CELLS_PER_GRAM, 0.05);
    const drawnAt = new Date(state.ts);
    const titerMeasuredAt = drawnAt.getTime() + 6 * DEMO_HOUR_MS;
    return {
      sampleId: tubeId(operation.runName, index),
      drawnAt: drawnAt.toISOString(),
      notes: index === 0 ? 'Inoculation check' : null,
      results: [
        { analyte: 'VCD', value: Number((totalCells * viability / 100).toFixed(2)), flag: null, unit: '10*9/mL', method: METHODS.cells, measured_at: null },
        { analyte: 'Viability', value: Number(viability.toFixed(1)), flag: null, unit: '%', method: METHODS.cells, measured_at: null },
        { analyte: 'Glucose', ...flagged(scatter(state.glucose, 0.03), LIMITS.glucose, 2), unit: 'g/L', method: METHODS.metabolites, measured_at: null },
        { analyte: 'Lactate', ...flagged(scatter(state.lactate, 0.04), LIMITS.lactate, 2), unit: 'g/L', method: METHODS.metabolites, measured_at: null },
        // HPLC runs the day's samples together later on: a sample drawn just now has no titer yet.
        ...(titerMeasuredAt > now ? [] : [{
          analyte: 'Titer', ...flagged(scatter(state.product, 0.04), LIMITS.titer, 3), unit: 'g/L', method: METHODS.titer,
          measured_at: new Date(titerMeasuredAt).toISOString(),
        }]),
      ],
    };
  });
}
