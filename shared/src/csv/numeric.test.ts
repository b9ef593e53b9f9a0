import { describe, expect, it } from 'vitest';
import { decimalCommaAllowed, isNumericCell, parseNumericCell, parsePlainDecimal } from './numeric.ts';
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

describe('parsePlainDecimal', () => {
  /** Reads `raw` inside other text, as the upload reads a cell inside its line. */
  const plain = (raw: string) => parsePlainDecimal(`x,${raw},y`, 2, 2 + raw.length);

  it('gives the double parseNumericCell gives, bit for bit, for plain decimals', () => {
    const samples = ['0', '-0', '+0', '-0.0', '1.', '.5', '-.5', '007', '26.4900000000001', '0.1', '0.3', '123456.789012',
      '999999999999999', '-99999999.9999999', '0.000000000000001', '0.0000000000000001', '000000000000000000042', '4.35', '1.005', '-273.15'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let sample = 0; sample < 20_000; sample += 1) {
      const zeros = '0'.repeat(random() < 0.2 ? Math.floor(random() * 6) : 0);
      const digits = zeros + Array.from({ length: 1 + Math.floor(random() * 15) }, () => Math.floor(random() * 10)).join('');
      const point = Math.floor(random() * (digits.length + 1));
      const sign = random() < 0.3 ? '-' : random() < 0.1 ? '+' : '';
      samples.push(`${sign}${digits.slice(0, point)}${random() < 0.9 ? '.' : ''}${digits.slice(point)}`);
    }
    for (const raw of samples) {
      const value = plain(raw);
      expect(value, raw).not.toBeUndefined();
      expect(Object.is(value, parseNumericCell(raw)), raw).toBe(true);
    }
  });

  it('reads an empty cell as missing', () => {
    expect(plain('')).toBeNull();
  });

  it.each(['1e5', ' 1', '1 ', '3,14', '1.2.3', '-', '.', '+', '--1', '0x1A', 'abc', 'NaN', 'Infinity', '1234567890123456', '0.12345678901234567', '0.00000000000000000000001'])(
    'leaves %j to parseNumericCell',
    (raw) => {
      expect(plain(raw)).toBeUndefined();
    },
  );
});

describe('non-numeric listing', () => {
  it('lists up to 5 distinct bad values per column and counts the rest', () => {
    const result = findNonNumericValues([
      { name: 'pH', values: ['7', 'a', 'b', 'a', '', 'c', 'd', 'e', 'f', 'g', 'h', '7.1'] },
      { name: 'DO', values: ['1', '2', ''] },
      { name: 'T', values: [' idle ', 'idle', 'n/a', '< 0.4', '?????'] },
    ]);
    // n/a, < 0.4 and ????? are flags (stored as missing), not bad values.
    expect(result).toEqual([
      { column: 'pH', badValues: ['a', 'b', 'c', 'd', 'e'], moreCount: 3 },
      { column: 'T', badValues: ['idle'], moreCount: 0 },
    ]);
    expect(nonNumericMessage(result)).toBe(
      "Column 'pH' has non-numeric values: a, b, c, d, e and 3 more; Column 'T' has non-numeric values: idle",
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
