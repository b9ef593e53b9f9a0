/**
 * The demo's live bioreactor: the same fed-batch model the demo seed draws its runs from, read at the
 * wall clock, so the simulated OPC UA server and MQTT publisher continue a running fermentation's
 * traces where the seeded readings end.
 */
import { simulateFedBatch, type FedBatchSeries } from '@bioprocess/shared/fed-batch-simulator';

/** The online probes of the model (the off-line titer is a sample, not a feed). */
export const LIVE_TAGS = ['temperature', 'ph', 'dissolvedO2', 'stirRate', 'feedRate', 'opticalDensity', 'exhaustCo2', 'exhaustO2', 'airFlow'] as const;
export type LiveTag = (typeof LIVE_TAGS)[number];
export type LiveReading = Record<LiveTag, number>;

const HOUR_MS = 3_600_000;
const STEP_SECONDS = 60;
/** The model is computed this far ahead at a time (a few milliseconds of work), then extended. */
const HORIZON_HOURS = 24;

export interface LiveFedBatchOptions {
  /** When the simulated culture was inoculated; the demo run started 20 hours before the seed. */
  batchStartMs: number;
  seed?: number;
}

export class LiveFedBatch {
  private series: FedBatchSeries | null = null;
  private computedUntilMs = 0;

  constructor(private readonly options: LiveFedBatchOptions) {}

  /** The probes' values at a moment, interpolated between the model's one-minute steps. */
  at(timeMs: number): LiveReading {
    if (!this.series || timeMs > this.computedUntilMs) {
      const hours = Math.max(1, (timeMs - this.options.batchStartMs) / HOUR_MS) + HORIZON_HOURS;
      this.series = simulateFedBatch({ startMs: this.options.batchStartMs, durationHours: hours, intervalSeconds: STEP_SECONDS, seed: this.options.seed ?? 1 });
      this.computedUntilMs = this.options.batchStartMs + (hours - 1) * HOUR_MS;
    }
    const series = this.series;
    const reading = {} as LiveReading;
    for (const tag of LIVE_TAGS) reading[tag] = interpolate(series[tag], timeMs);
    return reading;
  }
}

function interpolate(points: Array<[number, number]>, timeMs: number): number {
  const first = points[0]!;
  if (timeMs <= first[0]) return first[1];
  const index = Math.min(points.length - 1, Math.floor((timeMs - first[0]) / (STEP_SECONDS * 1000)));
  const [t0, v0] = points[index]!;
  const next = points[index + 1];
  if (!next) return v0;
  const fraction = (timeMs - t0) / (next[0] - t0);
  return Math.round((v0 + (next[1] - v0) * fraction) * 1000) / 1000;
}
