/**
 * Cell texts of the exports, on the hot path (one call per point). Values are written as JavaScript's
 * `String(number)` writes them, the shortest text that reads back as the same double, so a re-upload
 * stores the very same bits. Timestamps are ISO 8601 UTC with milliseconds, and microseconds (six
 * fraction digits) when the reading has them.
 */

/** `2024-01-01T00:00:00.000Z` (`.000123Z` with microseconds), the text of the whole second reused while points share it. */
export class IsoTimestamps {
  private second = Number.NaN;
  private prefix = '';

  format(ms: number, micros = 0): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.prefix = new Date(second * 1000).toISOString().slice(0, 19);
    }
    const milli = ms - second * 1000;
    const microText = micros === 0 ? '' : `${micros < 10 ? '00' : micros < 100 ? '0' : ''}${micros}`;
    return `${this.prefix}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}${microText}Z`;
  }
}

/** A value as its shortest round-trip text; empty when missing (NaN). */
export function valueText(value: number): string {
  return value === value ? String(value) : '';
}

/** A value for a spreadsheet cell: null when missing (NaN). */
export function valueOrNull(value: number): number | null {
  return value === value ? value : null;
}

/** Seconds between two instants (the later one `micros` past its millisecond), as a number text. */
export function elapsedText(ms: number, originMs: number, micros = 0): string {
  return micros === 0 ? String((ms - originMs) / 1000) : String(elapsedSeconds(ms, originMs, micros));
}

/** Seconds between two instants, the later one `micros` past its millisecond (a whole number of microseconds over 10^6: exact in its shortest text). */
export function elapsedSeconds(ms: number, originMs: number, micros: number): number {
  return ((ms - originMs) * 1000 + micros) / 1_000_000;
}
