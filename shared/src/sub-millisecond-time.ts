/**
 * Time finer than a millisecond. Stored points are keyed by epoch milliseconds (`ts`), and the
 * microseconds within that millisecond travel beside it (`ts_micros`, 0-999): every read, rollup and
 * the deduplication per (series, millisecond) stay as they were, while a file or a bulk post that
 * carried microseconds gets them back from raw reads and exports.
 *
 * One rule everywhere: a fraction of a second is cut after its sixth digit (never rounded, so a
 * reading never moves to another millisecond or second); its first three digits are the
 * millisecond's, the next three the microseconds.
 */

/** Microseconds per millisecond: the bound (exclusive) of `ts_micros`. */
export const MICROS_PER_MS = 1000;

/**
 * The microseconds within its millisecond that a time text states: the 4th to 6th digits of the
 * fraction after its seconds (`07:12:51.123456` gives 456, `07:12:51,1234` gives 400), 0 when it has
 * fewer than four. Any date form: the fraction is the one that follows `:SS`.
 */
export function fractionMicros(text: string): number {
  const length = text.length;
  // The shortest text with a fourth fraction digit is `H:MM:SS.ffff`.
  if (length < 12) return 0;
  let mark = -1;
  for (let index = 3; index < length; index += 1) {
    const code = text.charCodeAt(index);
    if ((code === 46 /* . */ || code === 44 /* , */) && text.charCodeAt(index - 3) === 58 /* : */
      && isDigit(text.charCodeAt(index - 1)) && isDigit(text.charCodeAt(index - 2))) {
      mark = index;
      break;
    }
  }
  if (mark < 0) return 0;
  let micros = 0;
  let scale = 100;
  for (let index = mark + 4; index < mark + 7 && index < length; index += 1) {
    const digit = text.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) break;
    micros += digit * scale;
    scale /= 10;
  }
  // The first three digits must be digits too, or this was no fraction of seconds.
  for (let index = mark + 1; index < mark + 4; index += 1) if (!isDigit(text.charCodeAt(index))) return 0;
  return micros;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * An epoch-milliseconds number split into its millisecond (cut toward zero, as before microseconds
 * were kept) and the microseconds of its fraction (three decimals: a double near today's epoch holds
 * no more). A negative number with a fraction keeps only its millisecond.
 */
export function splitEpochMs(value: number): { ms: number; micros: number } {
  const ms = Math.trunc(value);
  if (value <= 0 || ms === value) return { ms, micros: 0 };
  return { ms, micros: Math.min(MICROS_PER_MS - 1, Math.round((value - ms) * MICROS_PER_MS)) };
}

/**
 * The ISO text of a stored time: `toISOString()`'s (`.mmmZ`) without microseconds, six fraction
 * digits (`.mmmuuuZ`) with them.
 */
export function isoWithMicros(ms: number, micros: number): string {
  const iso = new Date(ms).toISOString();
  if (micros === 0) return iso;
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}
