/**
 * What a file's preamble states about the run: its start date and time, in the forms vendors write
 * (`Start Time: 2/18/2021 10:28:04 AM`, BioLector I's `DATE START;2017-03-02;07:02:03`, BioLector
 * Pro's `[start_date_time] 2019-07-12, 16:54:30`, Gen5's and MARS's separate `Date` and `Time`).
 * The start is a wall-clock time without a zone: the upload's time zone places it.
 */
import type { CsvDelimiter } from './row-parser.ts';
import { lineCells } from './layout-lines.ts';
import { detectTimestampFormat, parseTimestamp } from './timestamps.ts';

export interface PreambleStart {
  /** Wall-clock start as `YYYY-MM-DDTHH:MM:SS` (no zone). */
  wallClock: string;
  /** The preamble line it was read from, as written (1-based line number in the file). */
  line: number;
  text: string;
}

/** Keys (lower case, spaces and punctuation squeezed) that name a run's start. */
const START_KEYS = new Set(['start time', 'start date time', 'start date', 'date start', 'start', 'started', 'run start', 'experiment start']);
const DATE_KEYS = new Set(['date', 'run date', 'test date', 'measurement date']);
const TIME_KEYS = new Set(['time', 'run time', 'test time', 'measurement time']);

function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[_:[\]]+/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Key and value pairs of one preamble line: cells `key;value;...`, `key: value` inside a cell, `[key] value`. */
function pairsOfLine(line: string, delimiter: CsvDelimiter): [string, string][] {
  const bracketed = /^\s*\[([^\]]{1,80})\]\s*(.{0,200})$/.exec(line);
  if (bracketed) return [[normaliseKey(bracketed[1]!), bracketed[2]!.trim()]];
  const cells = lineCells(line, delimiter).map((cell) => cell.trim());
  const pairs: [string, string][] = [];
  for (let index = 0; index < cells.length; index += 1) {
    const cell = cells[index]!;
    const colon = cell.indexOf(':');
    if (colon > 0 && colon < 60 && cell.slice(colon + 1).trim() !== '') {
      pairs.push([normaliseKey(cell.slice(0, colon)), cell.slice(colon + 1).trim()]);
      continue;
    }
    const value = cells.slice(index + 1).filter((next) => next !== '');
    if (cell !== '' && value.length > 0 && cell.length <= 60) {
      pairs.push([normaliseKey(cell), value.slice(0, 2).join(' ')]);
      break;
    }
  }
  return pairs;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** A date-time text as wall clock, or null when it does not read (a comma between date and time is allowed). */
export function wallClockOf(text: string, preferDayFirst = false): string | null {
  const value = text.replace(/,\s*/g, ' ').replace(/\s+/g, ' ').trim();
  const detection = detectTimestampFormat([value], { preferDayFirst });
  if (detection.format === 'unknown' || detection.format === 'spreadsheet-serial') return null;
  const ms = parseTimestamp(value, detection, { timezoneOffsetMinutes: 0 });
  if (ms === null) return null;
  const date = new Date(ms);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}

/**
 * The start the preamble lines state, or null. `firstLine` is the 1-based number of lines[0]. Of
 * several start statements the last wins: a file of several read blocks (Tecan i-control) states each
 * block's start above it, and the table read is the one right after the preamble.
 */
export function findPreambleStart(
  lines: readonly string[],
  delimiter: CsvDelimiter,
  options: { firstLine?: number; preferDayFirst?: boolean } = {},
): PreambleStart | null {
  const firstLine = options.firstLine ?? 1;
  let date: { value: string; index: number } | null = null;
  let time: { value: string; index: number } | null = null;
  let stated: PreambleStart | null = null;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.length > 400) continue;
    for (const [key, value] of pairsOfLine(line, delimiter)) {
      if (START_KEYS.has(key)) {
        const wallClock = wallClockOf(value, options.preferDayFirst);
        if (wallClock) stated = { wallClock, line: firstLine + index, text: line.trim() };
      }
      if (DATE_KEYS.has(key) && !date) date = { value, index };
      if (TIME_KEYS.has(key) && !time) time = { value, index };
    }
  }
  if (stated) return stated;
  if (date && time) {
    const wallClock = wallClockOf(`${date.value} ${time.value}`, options.preferDayFirst);
    if (wallClock) return { wallClock, line: firstLine + date.index, text: `${lines[date.index]!.trim()} ${lines[time.index]!.trim()}` };
  }
  return null;
}
