/**
 * The detected layout as the wizard uses it: the reading choices the upload carries (so the server
 * cuts the file to the table the preview shows), the start a preamble states placed in the chosen
 * time zone, and the words the layout panel shows.
 */
import { parseTimeZone, WallClockConverter, type CsvLayout, type CsvReadBlock } from '@bioprocess/shared/csv/index';
import type { CsvReading } from '@bioprocess/shared/timeseries';

/** The upload's `reading`: what the preview detected or the user chose (a block is its header line; a plate grid says so). */
export function readingOf(layout: CsvLayout): CsvReading {
  const reading: CsvReading = { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null };
  return layout.grid ? { ...reading, plate_grid: true } : reading;
}

const BLOCK_SHAPES: Record<CsvReadBlock['shape'], string> = { grid: 'plate grid', columns: 'time across the columns', table: 'table' };

/** One read block as the Block picker names it: its title, where it starts and what it holds. */
export function blockLabel(block: CsvReadBlock): string {
  const size = block.shape === 'grid' ? '' : `, ${block.rows} row(s)`;
  return `${block.index}. ${block.title} (line ${block.header_line}: ${BLOCK_SHAPES[block.shape]}${size}${block.time_axis ? ', with a time axis' : ''})`;
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;

/** The instant of a wall-clock start (`2023-09-15T12:30:01`) in a zone, as ISO 8601 in UTC; null when either does not read. */
export function startInstant(wallClock: string, zone: string): string | null {
  const match = WALL_CLOCK.exec(wallClock.trim());
  const timeZone = parseTimeZone(zone);
  if (!match || !timeZone) return null;
  const [, year, month, day, hour, minute, second] = match;
  const wallMs = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second ?? '0'));
  if (Number.isNaN(wallMs)) return null;
  return new Date(new WallClockConverter(timeZone).toInstant(wallMs)).toISOString();
}

export const ENCODING_LABELS: Record<CsvLayout['encoding'], string> = {
  'utf-8': 'UTF-8', latin1: 'Windows-1252 (Latin-1)', 'utf-16le': 'UTF-16 LE', 'utf-16be': 'UTF-16 BE',
};

export const DELIMITER_LABELS: Record<CsvLayout['delimiter'], string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** One line about where the table lies: the preamble skipped and where it ends. */
export function describeTable(layout: CsvLayout): string {
  const parts = [layout.preamble_lines > 0
    ? `Header on line ${layout.header_line}: the ${layout.preamble_lines} line(s) before it are the file's preamble and are not read.`
    : `Header on line ${layout.header_line}.`];
  if (layout.separator_hint) parts.push("Excel's sep= line names the delimiter.");
  if (layout.grid) parts.push(`The plate grid ends at line ${layout.grid.last_line}; what follows is not read.`);
  return parts.join(' ');
}
