import { describe, expect, it } from 'vitest';
import { parseExpression, type DerivedNode } from '@bioprocess/shared/derived/expression';
import { evaluate, lag, logLinearSlope, rollingMean, timeDerivative, timeIntegral } from './evaluate.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const grid = (count: number, stepMs: number) => Float64Array.from({ length: count }, (_, i) => i * stepMs);

function run(text: string, references: Record<string, number[]>, times: Float64Array, properties: Record<string, number | null> = {}) {
  const parsed = parseExpression(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return Array.from(evaluate(parsed.tree, {
    times,
    references: new Map(Object.entries(references).map(([name, values]) => [name, Float64Array.from(values)])),
    properties: new Map(Object.entries(properties)),
  }));
}

describe('evaluating formulas on a grid', () => {
  it('computes arithmetic, comparisons and functions reading by reading, keeping gaps as gaps', () => {
    const times = grid(4, MINUTE);
    expect(run('[a] * 2 + [b] ^ 2 - 1', { a: [1, 2, NaN, 4], b: [3, 3, 3, NaN] }, times)).toEqual([10, 12, NaN, NaN]);
    expect(run('if([a] > 1.5, [a], -[a])', { a: [1, 2, NaN, 4] }, times)).toEqual([-1, 2, NaN, 4]);
    expect(run('max([a], 2) + min([a], 1, 0.5) + clamp([a], 1.5, 3)', { a: [1, 2, 3, 4] }, times)).toEqual([4, 4.5, 6.5, 7.5]);
    expect(run('ln([a]) + log(100) + sqrt(abs(-[a]))', { a: [1, 4, -1, 9] }, times)).toEqual([3, Math.log(4) + 4, NaN, Math.log(9) + 5]);
    expect(run('[a] / ([a] - 2)', { a: [1, 2, 3, 4] }, times)).toEqual([-1, NaN, 3, 2]);
    expect(run('-2^2', {}, times)).toEqual([4, 4, 4, 4]);
    expect(run('working_volume * 2', {}, times, { working_volume: 1.5 })).toEqual([3, 3, 3, 3]);
  });

  it('derives per unit of time between neighbouring readings', () => {
    const times = grid(5, 30 * MINUTE);
    const x = Float64Array.from([0, 1, 3, NaN, 10]);
    expect(Array.from(timeDerivative(times, x, HOUR))).toEqual([NaN, 2, 4, NaN, NaN]);
  });

  it('integrates by trapezoids from the first reading, adding nothing across a gap', () => {
    const times = grid(6, 6 * MINUTE);
    const x = Float64Array.from([10, 20, 20, NaN, 30, 40]);
    // 0.1 h steps: (10+20)/2*0.1 = 1.5, then +2 = 3.5, gap, then (30+40)/2*0.1 = 3.5 more.
    const integral = Array.from(timeIntegral(times, x, HOUR));
    expect(integral[0]).toBe(0);
    expect(integral[1]).toBeCloseTo(1.5, 12);
    expect(integral[2]).toBeCloseTo(3.5, 12);
    expect(integral[3]).toBeNaN();
    expect(integral[4]).toBeCloseTo(3.5, 12);
    expect(integral[5]).toBeCloseTo(7, 12);
  });

  it('averages over a trailing window and lags by a duration', () => {
    const times = grid(6, MINUTE);
    const x = Float64Array.from([1, 2, 3, NaN, 5, 6]);
    expect(Array.from(rollingMean(times, x, 3 * MINUTE))).toEqual([1, 1.5, 2, NaN, 4, 5.5]);
    expect(Array.from(lag(times, x, 2 * MINUTE))).toEqual([NaN, NaN, 1, 2, 3, NaN]);
  });

  it('finds the specific growth rate of exponential growth exactly', () => {
    const mu = 0.35;
    const times = grid(121, MINUTE);
    const od = Float64Array.from(times, (t) => 0.2 * Math.exp(mu * t / HOUR));
    const slope = logLinearSlope(times, od, 2 * HOUR);
    expect(slope[0]).toBeNaN();
    for (let i = 1; i < slope.length; i++) expect(Math.abs(slope[i]! - mu) / mu).toBeLessThan(1e-9);
  });

  it('never reaches what every object inherits, whatever tree it is handed', () => {
    const inputs = { times: grid(3, MINUTE), references: new Map([['od', Float64Array.from([1, 2, 3])]]), properties: new Map() };
    const od = { kind: 'reference', name: 'od' } as const;
    for (const name of ['hasOwnProperty', 'constructor', '__proto__', 'valueOf', 'toString']) {
      const time = { kind: 'time', name, argument: od, ms: HOUR } as unknown as DerivedNode;
      const call = { kind: 'call', name, args: [od] } as unknown as DerivedNode;
      const binary = { kind: 'binary', operator: name, left: od, right: od } as unknown as DerivedNode;
      for (const tree of [time, call, binary]) expect(() => evaluate(tree, inputs), name).toThrow(`The evaluator has no ${name}`);
    }
  });
});

