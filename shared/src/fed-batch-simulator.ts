/**
 * A small fed-batch E. coli fermentation model that produces plausible instrument traces for the
 * demo organisation: Monod growth on glucose, an exponential feed once the batch glucose is gone,
 * dissolved-oxygen control through a stirrer cascade, pH control around its setpoint, a temperature
 * shift at induction, optical density from biomass and product titer after induction. Deterministic
 * for a given seed so re-seeding produces the same readings.
 */

import { seededRandom } from './seeded-random.ts';

export interface FedBatchOptions {
  startMs: number;
  durationHours: number;
  /** Sampling interval of the online probes. */
  intervalSeconds?: number;
  seed?: number;
  /** Hours after inoculation when IPTG induction happens (temperature shift, product formation). */
  inductionHour?: number;
  initialVolumeL?: number;
  /** A feed valve that no longer closes: from this hour on this much feed flows on top of what the pump is asked for. */
  feedFault?: { fromHour: number; leakMlPerMin: number };
  /** Sees the culture after every step, so off-line samples can be drawn from the same culture as the probes. */
  onStep?: (state: FedBatchState) => void;
}

/** The culture at one step: what an off-line sample would measure. */
export interface FedBatchState {
  ts: number;
  hour: number;
  inductionHour: number;
  /** g/L dry cell weight. */
  biomass: number;
  /** g/L residual glucose. */
  glucose: number;
  /** g/L product. */
  product: number;
  /** % air saturation. */
  dissolvedO2: number;
}

/** The seed of a demo unit operation's simulation: its probes and its samples come from the same culture. */
export function simulationSeed(unitOperationId: number): number {
  return unitOperationId * 7919;
}

export interface FedBatchSeries {
  temperature: Array<[number, number]>;
  ph: Array<[number, number]>;
  dissolvedO2: Array<[number, number]>;
  stirRate: Array<[number, number]>;
  feedRate: Array<[number, number]>;
  opticalDensity: Array<[number, number]>;
  exhaustCo2: Array<[number, number]>;
  exhaustO2: Array<[number, number]>;
  /** Air into the vessel, L/min (1 vvm of the current volume). */
  airFlow: Array<[number, number]>;
  /** Offline samples, every 4 hours. */
  titer: Array<[number, number]>;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

export function simulateFedBatch(options: FedBatchOptions): FedBatchSeries {
  const interval = options.intervalSeconds ?? 60;
  const random = seededRandom(options.seed ?? 1);
  const noise = (amplitude: number) => (random() - 0.5) * 2 * amplitude;
  const inductionHour = options.inductionHour ?? 14;

  // Kinetic parameters typical of E. coli on glucose.
  const muMax = 0.62; // 1/h
  const ks = 0.05; // g/L
  const yieldXS = 0.48; // g biomass / g glucose
  const feedGlucose = 500; // g/L in the feed bottle
  const muSet = 0.16; // 1/h during the exponential feed
  const qpMax = 0.0025; // g product / g biomass / h after induction
  const maxFeedLh = 0.025; // the feed pump's ceiling

  let biomass = 0.12; // g/L
  let glucose = 20; // g/L
  let volume = options.initialVolumeL ?? 2.0; // L
  let product = 0; // g/L
  let dissolvedO2 = 100; // % air saturation
  let stirRate = 300; // rpm
  let ph = 7.0;
  let feedStartHour: number | null = null;
  let feedStartRate = 0;

  const series: FedBatchSeries = {
    temperature: [], ph: [], dissolvedO2: [], stirRate: [], feedRate: [], opticalDensity: [], exhaustCo2: [], exhaustO2: [], airFlow: [], titer: [],
  };
  const steps = Math.floor((options.durationHours * 3600) / interval);
  const dt = interval / 3600; // h

  for (let step = 0; step <= steps; step += 1) {
    const hour = step * dt;
    const ts = options.startMs + step * interval * 1000;
    const induced = hour >= inductionHour;
    const temperatureSetpoint = induced ? 30 : 37;

    if (feedStartHour === null && glucose < 0.5) {
      feedStartHour = hour;
      feedStartRate = (muSet * biomass * volume) / (yieldXS * feedGlucose);
    }
    // Exponential feed from the biomass at feed start, up to the pump's ceiling.
    const plannedFeedLh = feedStartHour === null ? 0 : Math.min(maxFeedLh, feedStartRate * Math.exp(muSet * (hour - feedStartHour)));
    const feedLh = options.feedFault && hour >= options.feedFault.fromHour ? plannedFeedLh + (options.feedFault.leakMlPerMin * 60) / 1000 : plannedFeedLh;

    // Oxygen limitation slows growth when DO is very low; induction burdens the cells.
    const oxygenFactor = dissolvedO2 / (dissolvedO2 + 2);
    const burden = induced ? 0.55 : 1;
    const glucoseAvailable = glucose + (feedLh / volume) * feedGlucose * dt;
    // Growth can never use more glucose than the step makes available (fed-batch runs glucose-limited).
    const uptakeDemand = (muMax * (glucoseAvailable / (ks + glucoseAvailable)) * oxygenFactor * burden * biomass * dt) / yieldXS;
    const glucoseUsed = Math.min(uptakeDemand, glucoseAvailable);
    const mu = (glucoseUsed * yieldXS) / (biomass * dt);

    biomass += (mu * biomass - (feedLh / volume) * biomass) * dt;
    glucose = Math.max(0, glucoseAvailable - glucoseUsed - (feedLh / volume) * glucose * dt);
    volume += feedLh * dt;
    if (induced) product += (qpMax * biomass - (feedLh / volume) * product) * dt;

    // DO: uptake grows with biomass; the cascade raises the stirrer to hold 30 %.
    const uptake = mu * biomass * 9;
    const transfer = (stirRate / 1200) ** 1.6 * 55 * ((100 - dissolvedO2) / 100);
    dissolvedO2 = Math.min(100, Math.max(0, dissolvedO2 + (transfer - uptake) * dt * 6));
    if (dissolvedO2 < 30) stirRate = Math.min(1200, stirRate + (30 - dissolvedO2) * 2.5 * dt * 60);
    else if (dissolvedO2 > 40 && stirRate > 300) stirRate = Math.max(300, stirRate - 4 * dt * 60);

    // Acetate and CO2 lower the pH; the base pump brings it back to 7.0 with a small dead band.
    ph -= Math.min(0.05, mu * biomass * 0.0006) * dt * 60;
    if (ph < 6.98) ph += (7.0 - ph) * 0.6 + noise(0.005);

    series.temperature.push([ts, round(temperatureSetpoint + noise(0.08) + (induced && hour - inductionHour < 0.5 ? (inductionHour + 0.5 - hour) * 12 : 0), 2)]);
    series.ph.push([ts, round(ph + noise(0.01), 3)]);
    series.dissolvedO2.push([ts, round(Math.max(0, dissolvedO2 + noise(0.8)), 2)]);
    series.stirRate.push([ts, Math.round(stirRate + noise(3))]);
    series.feedRate.push([ts, round(feedLh * 1000 / 60, 3)]); // mL/min
    series.opticalDensity.push([ts, round(biomass / 0.4 + noise(0.05 + biomass * 0.01), 3)]);
    // Off-gas by a gas balance: oxygen taken up for growth and maintenance, CO2 given off at an RQ near 1,
    // so OUR and CER computed back from these readings (the N2 balance) match the culture.
    const airLmin = volume * 1.0;
    const gasInMolH = (airLmin * 60) / 22.414;
    const ourMmolLh = (mu / 1.0 + 0.01) * biomass * 31.25; // Y(X/O2) = 1 g/g, maintenance 0.01 g/g/h
    const cerMmolLh = ourMmolLh * (induced ? 1.08 : 1.02);
    const o2Out = gasInMolH * 0.2095 - (ourMmolLh * volume) / 1000;
    const co2Out = gasInMolH * 0.0004 + (cerMmolLh * volume) / 1000;
    const gasOut = gasInMolH - (ourMmolLh * volume) / 1000 + (cerMmolLh * volume) / 1000;
    series.exhaustCo2.push([ts, round(Math.max(0.04, (co2Out / gasOut) * 100 + noise(0.005)), 4)]);
    series.exhaustO2.push([ts, round((o2Out / gasOut) * 100 + noise(0.005), 4)]);
    series.airFlow.push([ts, round(airLmin + noise(0.005), 3)]);
    options.onStep?.({ ts, hour, inductionHour, biomass, glucose, product, dissolvedO2 });
    if (step % Math.round((4 * 3600) / interval) === 0) series.titer.push([ts, round(Math.max(0, product + noise(0.03)), 3)]);
  }
  return series;
}
