/**
 * The landing page's decorative live process: a fed-batch fermentation with temperature held near
 * 37 °C, pH controlled around 7.0 and an exponential feed. Deterministic for a given seed so the
 * picture is the same on every visit; each tick produces the next sample.
 */

import { seededRandom } from '@bioprocess/shared/seeded-random';

export interface ProcessSample {
  minute: number;
  temperature: number;
  pH: number;
  feedRate: number;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

export function createProcessSimulation(seed = 42, minutesPerSample = 10) {
  const random = seededRandom(seed);
  const noise = (amplitude: number) => (random() - 0.5) * 2 * amplitude;
  let minute = 0;
  let pH = 7.0;

  return function nextSample(): ProcessSample {
    minute += minutesPerSample;
    const hours = minute / 60;
    // Feed starts after the batch phase and grows exponentially, with a periodic pump pulse; capped.
    const feedRate = hours < 6 ? 0 : Math.min(4.5, 0.35 * Math.exp(0.09 * (hours - 6)));
    // Acid formation pulls pH down with growth; the controller pushes it back towards 7.0.
    pH += -0.012 * (feedRate > 0 ? 1 : 0.4) + 0.35 * (7.0 - pH) + noise(0.015);
    const temperature = 37 + 0.25 * Math.sin(minute / 95) + noise(0.08);
    return { minute, temperature: round(temperature, 2), pH: round(pH, 3), feedRate: round(Math.max(0, feedRate + noise(0.03)), 3) };
  };
}
