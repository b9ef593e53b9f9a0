import { describe, expect, it } from 'vitest';
import { instrumentUnitFor } from './engineering-units.ts';

describe('instrument unit from engineering units', () => {
  it('keeps our units and UCUM codes as the server writes them', () => {
    expect(instrumentUnitFor('pH')).toBe('pH');
    expect(instrumentUnitFor('%')).toBe('%');
    expect(instrumentUnitFor('mL/min')).toBe('mL/min');
    expect(instrumentUnitFor('mmol/L')).toBe('mmol/L');
  });

  it('reads the common symbols of OPC UA servers as our units', () => {
    expect(instrumentUnitFor('°C')).toBe('celsius');
    expect(instrumentUnitFor('r/min')).toBe('rpm');
    expect(instrumentUnitFor(' r/min ')).toBe('rpm');
  });

  it('leaves the unit to the admin when the server says nothing usable', () => {
    expect(instrumentUnitFor(null)).toBe('');
    expect(instrumentUnitFor('')).toBe('');
    expect(instrumentUnitFor('furlongs per fortnight')).toBe('');
  });
});
