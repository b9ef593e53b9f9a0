/**
 * The non-numeric listing: a selected instrument column with non-numeric values fails
 * the upload, naming up to 5 distinct bad values per column and 'and N more'. Flagged cells
 * (flagged-cells.ts: limits, overflow words, `?????`, `n/a`) are no such values: they are missing.
 */
import { CSV_LIMITS, nonNumericValuesMessage } from './messages.ts';
import { parseNumericCell, type NumericCellOptions } from './numeric.ts';
import { readFlaggedCell } from './flagged-cells.ts';

export interface NonNumericColumn {
  column: string;
  /** The first distinct bad values, in order of appearance (at most 5). */
  badValues: string[];
  /** How many further distinct bad values there are. */
  moreCount: number;
}

/**
 * Distinct bad values remembered per column. A column of free text in a 50-million-row file would
 * otherwise grow without bound; past this, 'and N more' counts values without de-duplicating them.
 */
const MAX_TRACKED_DISTINCT = 10_000;

/** Incremental collector for streamed files: call `record` with each bad cell as it is found. */
export class NonNumericCollector {
  private readonly columns = new Map<string, { listed: string[]; seen: Set<string>; more: number }>();

  constructor(private readonly limit: number = CSV_LIMITS.maxBadValuesPerColumn) {}

  /** Checks one cell and records it when it is neither numeric nor a flag; returns the parsed value (null for a flag). */
  check(column: string, raw: string, options: NumericCellOptions = {}): number | null {
    const value = parseNumericCell(raw, options);
    if (value === null || !Number.isNaN(value)) return value;
    const flagged = readFlaggedCell(raw, options);
    if (flagged) return flagged.value;
    this.record(column, raw);
    return value;
  }

  record(column: string, raw: string): void {
    const value = raw.trim();
    let entry = this.columns.get(column);
    if (!entry) {
      entry = { listed: [], seen: new Set(), more: 0 };
      this.columns.set(column, entry);
    }
    if (entry.seen.has(value)) return;
    if (entry.seen.size < MAX_TRACKED_DISTINCT) entry.seen.add(value);
    if (entry.listed.length < this.limit) entry.listed.push(value);
    else entry.more += 1;
  }

  get hasErrors(): boolean {
    return this.columns.size > 0;
  }

  result(): NonNumericColumn[] {
    return [...this.columns].map(([column, entry]) => ({ column, badValues: entry.listed, moreCount: entry.more }));
  }

  /** The upload error message, or null when every cell was numeric or empty. */
  message(): string | null {
    return this.hasErrors ? nonNumericValuesMessage(this.result()) : null;
  }
}

/** One-shot form: every column's bad values (columns without any are left out). */
export function findNonNumericValues(
  columns: readonly { name: string; values: Iterable<string> }[],
  options: NumericCellOptions = {},
): NonNumericColumn[] {
  const collector = new NonNumericCollector();
  for (const column of columns) {
    for (const raw of column.values) collector.check(column.name, raw, options);
  }
  return collector.result();
}

/** The listing message for findNonNumericValues' result, or null when there is nothing to report. */
export function nonNumericMessage(result: readonly NonNumericColumn[]): string | null {
  return result.length === 0 ? null : nonNumericValuesMessage(result);
}
