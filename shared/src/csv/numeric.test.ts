import { describe, expect, it } from 'vitest';
import { decimalCommaAllowed, isNumericCell, parseNumericCell } from './numeric.ts';
import { findNonNumericValues, NonNumericCollector, nonNumericMessage } from './numeric-validation.ts';

describe('parseNumericCell', () => {
  it.each([
    ['42', 42],
    ['-7', -7],
    ['+3', 3],
    ['26.49000000000001', 26.49000000000001],
    ['.5', 0.5],
    ['5.', 5],
    ['1e5', 100000],
    ['-2.5E-3', -0.0025],
    [' 0', 0],
    ['  12.5  ', 12.5],
    ['0', 0],
    ['0.0', 0],
  ])('reads %j as %d', (raw, expected) => {
    expect(parseNumericCell(raw)).toBe(expected);
  });

  it('reads empty and blank cells as missing', () => {
    expect(parseNumericCell('')).toBeNull();
    expect(parseNumericCell('   ')).toBeNull();
  });

  it.each(['abc', '1,5', '0x1A', '0b11', ' 0o7', 'Infinity', '-Infinity', 'NaN', '1.2.3', '12abc', '1 2', '--1'])(
    'rejects %j',
    (raw) => {
      expect(Number.isNaN(parseNumericCell(raw))).toBe(true);
      expect(isNumericCell(raw)).toBe(false);
    },
  );

  it('reads a decimal comma only when allowed', () => {
    expect(parseNumericCell('3,14', { decimalComma: true })).toBe(3.14);
    expect(parseNumericCell(' -0,5e2 ', { decimalComma: true })).toBe(-50);
    expect(Number.isNaN(parseNumericCell('1,234,5', { decimalComma: true }))).toBe(true);
    expect(Number.isNaN(parseNumericCell('3,14'))).toBe(true);
    expect(decimalCommaAllowed(';')).toBe(true);
    expect(decimalCommaAllowed(',')).toBe(false);
  });
});

describe('non-numeric listing', () => {
  it('lists up to 5 distinct bad values per column and counts the rest', () => {
    const result = findNonNumericValues([
      { name: 'pH', values: ['7', 'a', 'b', 'a', '', 'c', 'd', 'e', 'f', 'g', 'h', '7.1'] },
      { name: 'DO', values: ['1', '2', ''] },
      { name: 'T', values: [' n/a ', 'n/a'] },
    ]);
    expect(result).toEqual([
      { column: 'pH', badValues: ['a', 'b', 'c', 'd', 'e'], moreCount: 3 },
      { column: 'T', badValues: ['n/a'], moreCount: 0 },
    ]);
    expect(nonNumericMessage(result)).toBe(
      "Column 'pH' has non-numeric values: a, b, c, d, e and 3 more; Column 'T' has non-numeric values: n/a",
    );
  });

  it('respects the decimal comma option and reports nothing for clean columns', () => {
    expect(findNonNumericValues([{ name: 'x', values: ['1,5', '2'] }], { decimalComma: true })).toEqual([]);
    expect(nonNumericMessage([])).toBeNull();
  });

  it('collects incrementally for streamed files', () => {
    const collector = new NonNumericCollector();
    expect(collector.check('a', '1.5')).toBe(1.5);
    expect(collector.check('a', '')).toBeNull();
    expect(collector.hasErrors).toBe(false);
    expect(collector.message()).toBeNull();
    expect(Number.isNaN(collector.check('a', 'oops'))).toBe(true);
    expect(collector.message()).toBe("Column 'a' has non-numeric values: oops");
  });
});
