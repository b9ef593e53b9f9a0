/**
 * Numeric cells: integers, decimals, scientific notation and, when the delimiter is not a
 * comma, a decimal comma ('3,14'); surrounding spaces are ignored. An empty cell (or an empty quoted
 * "" as DASware writes for values that did not change) is a missing value, not an error.
 *
 * Hot path of the ingest-worker (one call per cell): Number() does the parsing, and the few inputs it
 * accepts that are not decimal numbers (hex/binary/octal literals, Infinity) are rejected after.
 */

/** Result of parseNumericCell: a finite number, null for an empty (missing) cell, NaN when not numeric. */
export type NumericCell = number | null;

const DECIMAL_COMMA = /^[+-]?(\d+,\d*|,\d+)(e[+-]?\d+)?$/i;

export interface NumericCellOptions {
  /** Accept '3,14' as 3.14: true when the file's delimiter is not a comma. */
  decimalComma?: boolean;
}

export function parseNumericCell(raw: string, options: NumericCellOptions = {}): NumericCell {
  if (raw.length === 0) return null;
  // Number() ignores surrounding whitespace itself, and reads a blank string as 0.
  const value = Number(raw);
  if (value === value /* not NaN */) {
    if (value === 0) {
      if (raw.trim().length === 0) return null;
    } else if (value === Infinity || value === -Infinity) {
      return Number.NaN;
    }
    // Number('0x1A') is 26: reject radix literals, which are not decimal numbers.
    const first = raw.charCodeAt(0);
    if (first === 48 /* 0 */ || first <= 32 /* whitespace */) {
      const text = first === 48 ? raw : raw.trim();
      if (text.length > 2 && text.charCodeAt(0) === 48) {
        const marker = text.charCodeAt(1) | 0x20;
        if (marker === 120 /* x */ || marker === 98 /* b */ || marker === 111 /* o */) return Number.NaN;
      }
    }
    return value;
  }
  if (options.decimalComma) {
    const text = raw.trim();
    if (DECIMAL_COMMA.test(text)) return Number(text.replace(',', '.'));
  }
  return Number.NaN;
}

/** True when the cell is a number or empty (missing). */
export function isNumericCell(raw: string, options: NumericCellOptions = {}): boolean {
  return !Number.isNaN(parseNumericCell(raw, options));
}

/** Whether a decimal comma is allowed for a file with this delimiter. */
export function decimalCommaAllowed(delimiter: string): boolean {
  return delimiter !== ',';
}
