/**
 * Multi-section files such as Eppendorf DASware exports: INI-like `"[Name]"` lines, each followed by
 * its own table. The time series is the table of the `"[TrackData1]"` section (`"[TrackData]"` before
 * it is empty); later sections (`"[Events]"`, `"[End]"`, ...) hold other tables that are not readings.
 * Also the read blocks of plate-reader exports (findReadBlocks): several tables of readings, one read.
 */
import { isMarkerLine } from './layout-lines.ts';
import { LineCutter } from './line-cutter.ts';

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
  /** 1-based line of the section's header in the text. */
  headerLine: number;
  /** Offset of the next section's marker line, or the text's length when the section runs to the end. */
  endOffset: number;
  /** Non-blank lines under the header, up to the next marker or the text's end. */
  rows: number;
  /** The section's table (header line and rows) as text. */
  text: string;
}

/**
 * The data tables of a multi-section text, in file order: every section matching `pattern` that has a
 * table (DASGIP Control writes one `[TrackDataN]` per unit of a parallel run; DASware one). Empty when
 * the text is not multi-section. One pass: each line is looked at once.
 */
export function findDataSections(text: string, pattern: RegExp = DEFAULT_DATA_SECTION_PATTERN): CsvDataSection[] {
  if (!isMultiSectionCsv(text)) return [];
  const sections: CsvDataSection[] = [];
  let open: Omit<CsvDataSection, 'endOffset' | 'text'> | null = null;
  const close = (endOffset: number) => {
    if (open) sections.push({ ...open, endOffset, text: text.slice(open.headerOffset, endOffset) });
    open = null;
  };
  let offset = 0;
  let line = 1;
  let current: string | null = null;
  let awaitingHeader = false;
  while (offset < text.length) {
    let lineEnd = text.indexOf('\n', offset);
    if (lineEnd === -1) lineEnd = text.length;
    const content = text.slice(offset, lineEnd);
    const section = content.length < 200 ? sectionNameOfLine(content) : null;
    if (section !== null) {
      close(offset);
      current = section;
      awaitingHeader = pattern.test(section);
    } else if (content.trim() !== '') {
      if (awaitingHeader) {
        open = { name: current!, headerOffset: offset, headerLine: line, rows: 0 };
        awaitingHeader = false;
      } else if (open) {
        open.rows += 1;
      }
    }
    offset = lineEnd + 1;
    line += 1;
  }
  close(text.length);
  return sections;
}

/**
 * Finds the data table of a multi-section text: the first section matching `pattern` that has a table.
 * Returns null when the text is not multi-section or no such section has started within it.
 */
export function findDataSection(
  text: string,
  pattern: RegExp = DEFAULT_DATA_SECTION_PATTERN,
): CsvDataSection | null {
  return findDataSections(text, pattern)[0] ?? null;
}

/**
 * A data section's title for the Block picker: its name, and the unit its columns name when they all
 * name the same one (DASGIP's `Unit 3.pH1.PV [pH]` columns: `TrackData3 (Unit 3)`).
 */
export function dataSectionTitle(name: string, headerCells: readonly string[]): string {
  const owners = new Set<string>();
  for (const cell of headerCells) {
    const dot = cell.indexOf('.');
    if (dot > 0 && dot <= 60) owners.add(cell.slice(0, dot).trim());
  }
  const owner = owners.size === 1 ? [...owners][0]! : '';
  return owner === '' ? name : `${name} (${owner})`;
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

/**
 * Cuts a multi-section file to the one data section whose header is at `headerLine` (a read block the
 * user chose, e.g. DASGIP's `[TrackData3]` of unit 3): the sections before the data sections
 * (`[Info]`, `[CoreInfo]` with its TimezoneBias, `[TrackInfo]`) are kept, the other data sections
 * go, and the text ends where the chosen table does. The worker then reads the file as it reads a
 * one-unit export: the first data section is the chosen one. Text in, text out, line by line as it
 * streams, like TableCutter; throws when `headerLine` is not a data section's header.
 */
export class DataSectionCutter extends LineCutter {
  private line = 1;
  private state: 'outside' | 'awaiting-header' | 'skipping' | 'chosen' | 'done' = 'outside';
  private heldMarker = '';

  constructor(private readonly headerLine: number, private readonly pattern: RegExp = DEFAULT_DATA_SECTION_PATTERN) {
    super();
  }

  get finished(): boolean {
    return this.state === 'done';
  }

  override end(): string {
    const output = super.end();
    if (this.state !== 'chosen' && this.state !== 'done') throw new Error(this.notASectionHeader());
    return output;
  }

  private notASectionHeader(): string {
    return `Line ${this.headerLine} is not the header of a data section ([TrackData1], [TrackData2], ...) of this file: choose one of its blocks.`;
  }

  protected acceptLine(line: string): string {
    const number = this.line;
    this.line += 1;
    const content = line.replace(/\r?\n$/, '');
    const section = content.length < 200 ? sectionNameOfLine(content) : null;
    if (this.state === 'chosen') {
      if (section === null) return line;
      this.state = 'done';
      return '';
    }
    if (number > this.headerLine) throw new Error(this.notASectionHeader());
    if (section !== null) {
      const data = this.pattern.test(section);
      this.state = data ? 'awaiting-header' : 'outside';
      this.heldMarker = data ? line : '';
      return data ? '' : line;
    }
    if (this.state === 'outside') return line;
    if (content.trim() === '') return '';
    if (this.state === 'awaiting-header' && number === this.headerLine) {
      this.state = 'chosen';
      return this.heldMarker + line;
    }
    this.state = 'skipping';
    return '';
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

/**
 * Read blocks: several tables of readings in one file, one per wavelength, channel or plate. SoftMax
 * Pro declares them (`##BLOCKS= 4`, each closed by `~End`, its first line its title: `Plate:
 * Plate01`, `Group: Standards`); Tecan i-control writes a `Label:` line above each read, Gen5 a title
 * line (`600`) above each read's table. The detection lists them and reads one (the user's choice,
 * else the first with a time axis, else the first).
 */
export interface CsvReadBlock {
  /** 1-based position among the blocks found. */
  index: number;
  /** The block's title as the file writes it (`Plate: Plate01`, `Label: Abs600`, `600`), else `Table at line N`. */
  title: string;
  /** 1-based lines: the block's header and its last table line. */
  header_line: number;
  last_line: number;
  /** Data lines under the header (before the first blank line or marker), and the header's width. */
  rows: number;
  columns: number;
  /** `grid`: a plate grid; `columns`: time runs across the columns; `table`: a table of rows. */
  shape: 'table' | 'grid' | 'columns';
  /** A time column (or a time row, for `columns`): the block is a time series. */
  time_axis: boolean;
}

/** How the detection judges one table: its shape and whether it has a time axis; null leaves it out. */
export type ReadBlockJudge = (headerIndex: number, run: number) => { shape: CsvReadBlock['shape']; time_axis: boolean } | null;

const SOFTMAX_BLOCKS = /^##BLOCKS=\s*\d+/;
const SOFTMAX_BLOCK_END = /^~End\s*$/;
/** Lines above a header looked at for its title. */
const TITLE_LOOKBACK = 20;

/** True when the file declares its blocks (SoftMax Pro's `##BLOCKS= n` first line). */
export function declaresBlocks(lines: readonly string[]): boolean {
  return lines.length > 0 && SOFTMAX_BLOCKS.test(lines[0]!);
}

function namedCells(cells: readonly string[]): number {
  let count = 0;
  for (const cell of cells) if (cell.trim() !== '') count += 1;
  return count;
}

/** Table lines after `index` (non-blank, two or more cells, at most one wider than the header, no marker), up to `end`. */
function runAfter(cells: readonly (readonly string[])[], lines: readonly string[], index: number, end: number): number {
  const width = cells[index]!.length;
  let run = 0;
  for (let next = index + 1; next < end; next += 1) {
    const line = lines[next]!;
    if (line.trim() === '' || isMarkerLine(line)) break;
    const row = cells[next]!;
    if (row.length < 2 || row.length > width + 1) break;
    run += 1;
  }
  return run;
}

/** A line that may head a block's table: three or more named cells, naming at least half of its cells. */
function mayBeHeader(cells: readonly string[], line: string): boolean {
  const named = namedCells(cells);
  return named >= 3 && named * 2 >= cells.length - 1 && !isMarkerLine(line);
}

/** The title above a header: a `Label:` line, else the nearest one-cell line, within `from`..`headerIndex`. */
function titleAbove(cells: readonly (readonly string[])[], lines: readonly string[], from: number, headerIndex: number): string {
  let nearest: string | null = null;
  for (let index = headerIndex - 1; index >= Math.max(from, headerIndex - TITLE_LOOKBACK); index -= 1) {
    const text = lines[index]!.trim();
    if (text === '' || text.length > 120) continue;
    if (/^Label:/i.test(text)) return text;
    if (nearest === null && namedCells(cells[index]!) === 1 && cells[index]!.length === 1) nearest = text;
  }
  return nearest ?? `Table at line ${headerIndex + 1}`;
}

/**
 * The read blocks of a file's first lines, each line already split into cells with the file's
 * delimiter. Declared blocks (SoftMax Pro) are each one block with the longest table in it; otherwise
 * every table of three or more named columns and two or more rows that `judge` keeps (a plate grid or
 * a table with a time axis). Linear: each line is looked at a bounded number of times.
 */
export function findReadBlocks(lines: readonly string[], cells: readonly (readonly string[])[], judge: ReadBlockJudge): CsvReadBlock[] {
  const blocks: CsvReadBlock[] = [];
  const add = (title: string, headerIndex: number, run: number) => {
    const verdict = judge(headerIndex, run);
    if (!verdict) return;
    blocks.push({
      index: blocks.length + 1, title, header_line: headerIndex + 1, last_line: headerIndex + 1 + run,
      rows: run, columns: cells[headerIndex]!.length, ...verdict,
    });
  };
  if (declaresBlocks(lines)) {
    let start = 1;
    for (let index = 1; index <= lines.length; index += 1) {
      if (index < lines.length && !SOFTMAX_BLOCK_END.test(lines[index]!)) continue;
      // The block's first line is its title; its table is the longest run of table lines after it.
      let best: { index: number; run: number } | null = null;
      for (let line = start + 1; line < index; line += 1) {
        if (!mayBeHeader(cells[line]!, lines[line]!)) continue;
        const run = runAfter(cells, lines, line, index);
        if (run > 0 && (!best || run > best.run)) best = { index: line, run };
        line += run;
      }
      // The lines after the last `~End` are a footer, not a block.
      if (best && index < lines.length) add(cells[start]!.filter((cell) => cell.trim() !== '').slice(0, 2).join(' ').slice(0, 80), best.index, best.run);
      start = index + 1;
    }
    return blocks;
  }
  let previousEnd = 0;
  for (let index = 0; index < lines.length; index += 1) {
    if (!mayBeHeader(cells[index]!, lines[index]!)) continue;
    const run = runAfter(cells, lines, index, lines.length);
    if (run < 2) continue;
    const count = blocks.length;
    add(titleAbove(cells, lines, previousEnd, index), index, run);
    index += run;
    // A title is looked for above a block up to the block before it (a table left out is no block).
    if (blocks.length > count) previousEnd = index + 1;
  }
  return blocks;
}
