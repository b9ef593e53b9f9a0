import { describe, expect, it } from 'vitest';
import { createUnitConverter, unitConversionProblem } from './unit-conversion.ts';
import { csvMappingSchema } from '../timeseries.ts';

function converter(from: string, to: string): (value: number) => number {
  const made = createUnitConverter(from, to);
  if (typeof made !== 'function') throw new Error(made.problem);
  return made;
}

describe('unit conversion of a CSV column', () => {
  it('converts compatible units to the value the conversion means', () => {
    expect(converter('mL/h', 'L/h')(150)).toBe(0.15);
    expect(converter('mL/h', 'L/h')(0.7)).toBe(0.0007);
    expect(converter('mg/L', 'g/L')(250)).toBe(0.25);
    expect(converter('L/h', 'mL/min')(1.2)).toBe(20);
    // Temperatures have an offset; the spec's unit names convert as their UCUM codes.
    expect(converter('[degF]', 'Cel')(212)).toBe(100);
    expect(converter('fahrenheit', 'celsius')(98.6)).toBe(37);
    expect(converter('Cel', '[degF]')(-40)).toBe(-40);
    expect(converter('g/L', 'g/L')(1.2345678901234567)).toBe(1.2345678901234567);
  });

  it('refuses units of different quantities, naming both', () => {
    expect(unitConversionProblem('mL/h', 'g/L')).toBe("'mL/h' cannot be converted to 'g/L': the two units do not measure the same quantity.");
    expect(unitConversionProblem('mL/h', 'OD600')).toBe("'OD600' is not a unit that converts (a UCUM code such as mL/h, g/L or Cel).");
    expect(unitConversionProblem('mL/h', 'L/h')).toBeNull();
  });

  it('is refused in a mapping before anything is queued', () => {
    const result = csvMappingSchema.safeParse({
      timestamp_column: 'time', columns: [{ column: 'Feed', instrument_id: 1, convert_unit: { from: 'mL/h', to: 'Cel' } }],
    });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ path: ['columns', 0, 'convert_unit'], message: "'mL/h' cannot be converted to 'Cel': the two units do not measure the same quantity." });
  });
});
