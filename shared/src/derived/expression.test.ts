import { describe, expect, it } from 'vitest';
import { parseDuration, parseExpression, type DerivedNode } from './expression.ts';

function tree(text: string): DerivedNode {
  const parsed = parseExpression(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.tree;
}

function errorOf(text: string) {
  const parsed = parseExpression(text);
  if (parsed.ok) throw new Error(`${text} parsed`);
  return parsed.error;
}

describe('derived parameter expressions', () => {
  it('gives * and / precedence over + and -, and ^ over both, right-associative', () => {
    expect(tree('1 + 2 * 3')).toEqual({
      kind: 'binary', operator: '+', left: { kind: 'number', value: 1 },
      right: { kind: 'binary', operator: '*', left: { kind: 'number', value: 2 }, right: { kind: 'number', value: 3 } },
    });
    expect(tree('2 ^ 3 ^ 2')).toEqual({
      kind: 'binary', operator: '^', left: { kind: 'number', value: 2 },
      right: { kind: 'binary', operator: '^', left: { kind: 'number', value: 3 }, right: { kind: 'number', value: 2 } },
    });
    expect(tree('2 * 3 ^ 2')).toMatchObject({ operator: '*', right: { operator: '^' } });
    expect(tree('(1 + 2) * 3')).toMatchObject({ operator: '*', left: { operator: '+' } });
    expect(tree('1 < 2 + 3')).toMatchObject({ operator: '<', right: { operator: '+' } });
  });

  it('reads references by type or quoted name, properties by name, and time functions with their durations', () => {
    const parsed = parseExpression(`time_integral(["Feed pump"], 'h') / working_volume + rolling_mean([exhaust_o2], '10min')`);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.references.sort()).toEqual(['Feed pump', 'exhaust_o2']);
    expect(parsed.properties).toEqual(['working_volume']);
    expect(tree("lag([od], '5min')")).toEqual({ kind: 'time', name: 'lag', argument: { kind: 'reference', name: 'od' }, ms: 300_000 });
    expect(tree("log_linear_slope([od], '2h')")).toMatchObject({ ms: 7_200_000 });
    expect(tree('if([od] > 2, 1, clamp([od], 0, 1))')).toMatchObject({ kind: 'call', name: 'if' });
  });

  it('parses durations: units alone for rates, amounts for windows', () => {
    expect(parseDuration('h', false)).toBe(3_600_000);
    expect(parseDuration('2h', false)).toBeNull();
    expect(parseDuration('30s', true)).toBe(30_000);
    expect(parseDuration('1.5d', true)).toBe(129_600_000);
    expect(parseDuration('0min', true)).toBeNull();
    expect(parseDuration('10 parsecs', true)).toBeNull();
  });

  it('names the position and the problem of a bad expression', () => {
    expect(errorOf('1 + * 2')).toEqual({ position: 4, message: 'Expected expression after +' });
    expect(errorOf('([od] + 1')).toMatchObject({ position: 9 });
    expect(errorOf('  ')).toMatchObject({ position: 0, message: 'The expression is empty' });
    expect(errorOf('3 % 2')).toMatchObject({ position: 2 });
    expect(errorOf('[od] + sqr([od])')).toMatchObject({ position: 7, message: expect.stringContaining('Unknown function sqr') });
    expect(errorOf('[od] * volume')).toMatchObject({ position: 7, message: expect.stringContaining('Unknown name volume') });
    expect(errorOf("time_derivative([od], 'fortnight')")).toMatchObject({ position: 0, message: expect.stringContaining("time unit 's', 'min', 'h' or 'd'") });
    expect(errorOf('clamp([od], 1)')).toMatchObject({ message: 'clamp takes 3 arguments, not 2' });
    expect(errorOf('[]')).toMatchObject({ message: expect.stringContaining('names one instrument') });
    expect(errorOf("'text'")).toMatchObject({ message: expect.stringContaining('is not a number') });
    expect(errorOf('x'.repeat(2_001))).toMatchObject({ message: expect.stringContaining('longer than 2000') });
  });

  it('refuses what is not part of the language', () => {
    for (const text of ['this', 'a.b', '[od] && 1', '!1', '~1', 'process.exit(1)', 'constructor("x")']) {
      expect(parseExpression(text).ok, text).toBe(false);
    }
  });

  it('knows only its own functions and properties, never the names every JavaScript object has', () => {
    for (const name of ['hasOwnProperty', 'constructor', '__proto__', 'valueOf', 'toString', 'isPrototypeOf', 'toLocaleString']) {
      for (const call of [`${name}([od], 'h')`, `${name}([od], '10min')`, `${name}([od])`, `${name}(1, 2, 3)`]) {
        expect(errorOf(call), call).toMatchObject({ message: expect.stringContaining(`Unknown function ${name}`) });
      }
      expect(errorOf(`${name} + 1`), name).toMatchObject({ message: expect.stringContaining(`Unknown name ${name}`) });
      expect(errorOf(`[od] * ${name}`), name).toMatchObject({ position: 7, message: expect.stringContaining(`Unknown name ${name}`) });
    }
  });

  it('reads sample analytes by name, with their unit when given, each once', () => {
    const parsed = parseExpression(`-time_derivative(sample("Glucose"), 'd') / sample('VCD', '10*6/mL') + sample("glucose")`);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.references).toEqual([]);
    expect(parsed.samples.map(({ analyte, unit }) => ({ analyte, unit }))).toEqual([{ analyte: 'Glucose', unit: null }, { analyte: 'VCD', unit: '10*6/mL' }]);
    for (const text of ['sample(Glucose)', 'sample()', 'sample("")', 'sample("Glucose", 1)', 'sample("a", "b", "c")']) {
      expect(errorOf(text), text).toMatchObject({ position: 0, message: expect.stringContaining('sample takes an analyte') });
    }
  });
});
