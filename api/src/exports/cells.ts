/**
 * Cell texts of the exports, on the hot path (one call per point). Values are written as JavaScript's
 * `String(number)` writes them, the shortest text that reads back as the same double, so a re-upload
 * stores the very same bits. Timestamps are ISO 8601 UTC with milliseconds.
 */

/** `2024-01-01T00:00:00.000Z`, the text of the whole second reused while points share it. */
export class IsoTimestamps {
  private second = Number.NaN;
  private prefix = '';

  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.prefix = new Date(second * 1000).toISOString().slice(0, 19);
    }
    const milli = ms - second * 1000;
    return `${this.prefix}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
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

/** Seconds between two instants, as a number text. */
export function elapsedText(ms: number, originMs: number): string {
  return String((ms - originMs) / 1000);
}
