import { describe, expect, it } from 'vitest';
import { countFlaggedCell, flaggedCellsMessage, isPercentColumn, MissingValues, readFlaggedCell } from './flagged-cells.ts';

describe('flagged cells', () => {
  it('reads the flags of real exports as missing, with their kind', () => {
    expect(readFlaggedCell('< 8.706')).toEqual({ value: null, flag: 'below-limit' });
    expect(readFlaggedCell('  < 0.4000')).toEqual({ value: null, flag: 'below-limit' });
    expect(readFlaggedCell('>50')).toEqual({ value: null, flag: 'above-limit' });
    expect(readFlaggedCell('≤ LOQ')).toEqual({ value: null, flag: 'below-limit' });
    for (const text of ['OVRFLW', '?????', 'NaN', 'n/a', '#N/A', '#DIV/0!', '-----', 'Infinity', 'ERROR']) {
      expect(readFlaggedCell(text), text).toEqual({ value: null, flag: 'not-a-number' });
    }
  });

  it("reads '10.00%' as 10 in a % column and as a flag elsewhere", () => {
    expect(readFlaggedCell('10.00%', { percentUnit: true })).toEqual({ value: 10, flag: null });
    expect(readFlaggedCell('10.00%')).toEqual({ value: null, flag: 'percent' });
    expect(readFlaggedCell('12,5 %', { percentUnit: true, decimalComma: true })).toEqual({ value: 12.5, flag: null });
    expect(isPercentColumn('Viability [%]')).toBe(true);
    expect(isPercentColumn('Sparging O2%')).toBe(true);
    expect(isPercentColumn('DO (%)')).toBe(true);
    expect(isPercentColumn('Viable Density')).toBe(false);
  });

  it('leaves text that is no flag to the non-numeric listing', () => {
    expect(readFlaggedCell('pump B')).toBeNull();
    expect(readFlaggedCell('SAMPLE 0001')).toBeNull();
  });

  it("matches the user's missing values by number (any spelling) or by text", () => {
    const missing = new MissingValues(['-9999', 'OVER']);
    expect(missing.isMissingNumber(-9999)).toBe(true);
    expect(missing.isMissingNumber(Number('-9999.00'))).toBe(true);
    expect(missing.isMissingNumber(-999)).toBe(false);
    expect(missing.isMissingText(' OVER ')).toBe(true);
  });

  it('counts every flag and keeps the first five distinct texts', () => {
    const entry = { count: 0, examples: [] as string[] };
    for (const text of ['< 1', '< 1', '< 2', '< 3', '< 4', '< 5', '< 6']) countFlaggedCell(entry, text);
    expect(entry).toEqual({ count: 7, examples: ['< 1', '< 2', '< 3', '< 4', '< 5'] });
    expect(flaggedCellsMessage([{ column: 'value', key: 'AC2B', ...entry }])).toBe(
      "7 flagged cell(s) stored as missing values: value (AC2B): 7 ('< 1', '< 2', '< 3', '< 4', '< 5').",
    );
    expect(flaggedCellsMessage([])).toBeNull();
  });
});
