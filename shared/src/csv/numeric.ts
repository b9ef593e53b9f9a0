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

/** 10^0 .. 10^22: each is exactly a double. */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => 10 ** exponent);
/** Significant digits whose integer is always exact in a double (below 2^53). */
const MAX_EXACT_DIGITS = 15;

/**
 * Reads text[start, end) when it is a plain decimal - an optional sign, digits with at most 15
 * significant ones and at most 22 after an optional point - with char codes, without making a string: the upload's hot path, one call per
 * cell. Answers null for an empty cell and undefined for any other shape (exponents, spaces, decimal
 * commas, long digit strings, text), which parseNumericCell then decides. The result is the double
 * Number() gives: the digits form an exact integer, 10^k is exact, and one IEEE division rounds the
 * exact quotient correctly.
 */
export function parsePlainDecimal(text: string, start: number, end: number): NumericCell | undefined {
  if (start === end) return null;
  let index = start;
  const sign = text.charCodeAt(index);
  const negative = sign === 45; /* - */
  if (negative || sign === 43 /* + */) index += 1;
  let mantissa = 0;
  let digits = 0;
  let significantDigits = 0;
  let fractionDigits = 0;
  let pointSeen = false;
  for (; index < end; index += 1) {
    const code = text.charCodeAt(index);
    const digit = code - 48;
    if (digit >= 0 && digit <= 9) {
      mantissa = mantissa * 10 + digit;
      digits += 1;
      if (mantissa !== 0) significantDigits += 1;
      if (pointSeen) fractionDigits += 1;
    } else if (code === 46 /* . */ && !pointSeen) {
      pointSeen = true;
    } else {
      return undefined;
    }
  }
  if (digits === 0 || significantDigits > MAX_EXACT_DIGITS || fractionDigits >= EXACT_POWERS_OF_TEN.length) return undefined;
  const value = fractionDigits === 0 ? mantissa : mantissa / EXACT_POWERS_OF_TEN[fractionDigits]!;
  return negative ? -value : value;
}

/** True when the cell is a number or empty (missing). */
export function isNumericCell(raw: string, options: NumericCellOptions = {}): boolean {
  return !Number.isNaN(parseNumericCell(raw, options));
}

/** Whether a decimal comma is allowed for a file with this delimiter. */
export function decimalCommaAllowed(delimiter: string): boolean {
  return delimiter !== ',';
}
