/**
 * Multi-section files such as Eppendorf DASware exports: INI-like `"[Name]"` lines, each followed by
 * its own table. The time series is the table of the `"[TrackData1]"` section (`"[TrackData]"` before
 * it is empty); later sections (`"[Events]"`, `"[End]"`, ...) hold other tables that are not readings.
 */

/** Sections whose table holds the time series, by default (DASware: TrackData, TrackData1, ...). */
export const DEFAULT_DATA_SECTION_PATTERN = /^TrackData\d*$/i;

/**
 * One character class after the closing bracket: the former `\s*[;,\t|]*\s*` could split a run of
 * tabs three ways, which made a long cell of tabs take cubic time to reject.
 */
const SECTION_LINE = /^\s*"?\[([^\]"\r\n]+)\]"?[\s;,|]*$/;

/** The section name when a raw line is a section marker (`"[TrackData1]"`, `[Events]`), else null. */
export function sectionNameOfLine(line: string): string | null {
  const match = SECTION_LINE.exec(line);
  return match ? match[1]!.trim() : null;
}

/** The section name when a parsed row is a section marker (one non-empty field `[Name]`), else null. */
export function sectionNameOfRow(row: readonly string[]): string | null {
  const first = row[0];
  if (first === undefined || first.length < 3 || first.charCodeAt(0) !== 91 /* [ */) return null;
  for (let index = 1; index < row.length; index += 1) if (row[index] !== '') return null;
  return sectionNameOfLine(first);
}

/** True when the text starts (after blank lines) with a section marker line. */
export function isMultiSectionCsv(text: string): boolean {
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const firstLine = content.replace(/^[\r\n\s]+/, '').split(/\r?\n/, 1)[0] ?? '';
  return sectionNameOfLine(firstLine) !== null;
}

export interface CsvDataSection {
  /** The section's name, e.g. 'TrackData1'. */
  name: string;
  /** Offset in the text of the section's header line. */
  headerOffset: number;
  /** Offset of the next section's marker line, or the text's length when the section runs to the end. */
  endOffset: number;
  /** The section's table (header line and rows) as text. */
  text: string;
}

/**
 * Finds the data table of a multi-section text: the first section matching `pattern` that has a table.
 * Returns null when the text is not multi-section or no such section has started within it.
 */
export function findDataSection(
  text: string,
  pattern: RegExp = DEFAULT_DATA_SECTION_PATTERN,
): CsvDataSection | null {
  if (!isMultiSectionCsv(text)) return null;
  let offset = 0;
  let current: string | null = null;
  let headerOffset = -1;
  let name = '';
  while (offset < text.length) {
    let lineEnd = text.indexOf('\n', offset);
    if (lineEnd === -1) lineEnd = text.length;
    const line = text.slice(offset, lineEnd);
    const section = line.length < 200 ? sectionNameOfLine(line) : null;
    if (section !== null) {
      if (headerOffset !== -1) {
        return { name, headerOffset, endOffset: offset, text: text.slice(headerOffset, offset) };
      }
      current = section;
    } else if (current !== null && headerOffset === -1 && pattern.test(current) && line.trim() !== '') {
      headerOffset = offset;
      name = current;
    }
    offset = lineEnd + 1;
  }
  if (headerOffset === -1) return null;
  return { name, headerOffset, endOffset: text.length, text: text.slice(headerOffset) };
}

export type DataSectionVerdict = 'skip' | 'header' | 'row' | 'end';

/**
 * Streaming form of findDataSection for the worker: feed every parsed row in order; it says whether
 * the row is to be skipped, is the data table's header, a data row, or the end of the table (the next
 * section: the worker can stop reading there).
 */
export class DataSectionFilter {
  private state: 'before' | 'awaiting-header' | 'in-table' | 'done' = 'before';
  sectionName: string | null = null;

  constructor(private readonly pattern: RegExp = DEFAULT_DATA_SECTION_PATTERN) {}

  accept(row: readonly string[]): DataSectionVerdict {
    if (this.state === 'done') return 'end';
    const section = sectionNameOfRow(row);
    if (this.state === 'in-table') {
      if (section === null) return 'row';
      this.state = 'done';
      return 'end';
    }
    if (section !== null) {
      const matches = this.pattern.test(section);
      this.state = matches ? 'awaiting-header' : 'before';
      if (matches) this.sectionName = section;
      return 'skip';
    }
    if (this.state === 'awaiting-header') {
      this.state = 'in-table';
      return 'header';
    }
    return 'skip';
  }

  /** True once the data table's header has been seen. */
  get foundTable(): boolean {
    return this.state === 'in-table' || this.state === 'done';
  }
}

/** A TimezoneBias line is short; longer lines are not looked at (keeps the search linear). */
const BIAS_LINE_MAX_CHARS = 200;
const BIAS_NAME = /^"?TimezoneBias"?/i;

/** The minutes of one trimmed line `"TimezoneBias";120` (one delimiter, quotes optional), else null. */
function biasOfLine(line: string): number | null {
  const name = BIAS_NAME.exec(line);
  if (!name) return null;
  const rest = line.slice(name[0].length).replace(/^ +/, '');
  if (!';,\t|'.includes(rest.charAt(0)) || rest.length === 0) return null;
  const value = rest.slice(1).trim().replace(/^"/, '').replace(/"$/, '').trim();
  return /^-?\d{1,6}$/.test(value) ? Number(value) : null;
}

/**
 * DASware's `"TimezoneBias";120` in `[CoreInfo]`: minutes the instrument's local time is ahead of UTC
 * (120 for a summer-time run in Central Europe). Null when absent. Line by line rather than one
 * multi-line pattern, whose leading `\s*` re-read every following blank line from each line start.
 */
export function readTimezoneBiasMinutes(text: string): number | null {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end - start <= BIAS_LINE_MAX_CHARS) {
      const line = text.slice(start, end).trim();
      const minutes = biasOfLine(line);
      if (minutes !== null) return minutes;
    }
    start = end + 1;
  }
  return null;
}
