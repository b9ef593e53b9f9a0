/**
 * Hostile CSV shapes for the upload tests, each with its size as a parameter so a test can double it
 * and check that the reader's work at most doubles. Every shape is one a security review
 * found or one of the same family: what a parser that is quadratic somewhere would choke on.
 */

const TIME = '2024-01-01T00:00:00Z';

/** Timestamps one second apart from 2024-01-01, as ISO text. */
function isoAt(second: number): string {
  return new Date(Date.UTC(2024, 0, 1) + second * 1000).toISOString();
}

export interface AdversarialCsv {
  /** What it is, for test names. */
  name: string;
  text: string;
}

/** A header of `columns` columns (time, v, c3...) over `rows` rows holding only a timestamp and v. */
export function wideHeaderShortRows(columns: number, rows: number): AdversarialCsv {
  const header = ['time', 'v', ...Array.from({ length: Math.max(0, columns - 2) }, (_, index) => `c${index + 3}`)].join(',');
  const lines = Array.from({ length: rows }, (_, row) => `${isoAt(row)},${row % 10}`);
  return { name: `${columns} columns over ${rows} short rows`, text: `${header}\n${lines.join('\n')}\n` };
}

/** A header of `time`, `v` and `copies` repeats of one name, with one data row. */
export function repeatedHeaderNames(copies: number, name = 'x'): AdversarialCsv {
  return { name: `${copies} repeats of one header name`, text: `time,v,${Array(copies).fill(name).join(',')}\n${TIME},1\n` };
}

/** `bytes` bytes of one line without any line feed (and without a delimiter unless `cell` has one). */
export function giantLine(bytes: number, cell = 'a'): AdversarialCsv {
  return { name: `one line of ${bytes} bytes without a line feed`, text: cell.repeat(Math.ceil(bytes / cell.length)).slice(0, bytes) };
}

/** A header and a data line whose header follows one line of `bytes` bytes: the long line is line 2. */
export function longSecondLine(bytes: number): AdversarialCsv {
  return { name: `line 2 of ${bytes} bytes`, text: `time,v\n${TIME},${'1'.repeat(bytes)}\n${isoAt(1)},2\n` };
}

/**
 * A quoted field of `bytes` bytes that runs over many lines (a line feed every `lineEvery` bytes), so
 * no single line is long but the record is.
 */
export function giantQuotedField(bytes: number, lineEvery = 64): AdversarialCsv {
  const piece = `${'q'.repeat(lineEvery - 1)}\n`;
  const body = piece.repeat(Math.ceil(bytes / piece.length)).slice(0, bytes);
  return { name: `a quoted field of ${bytes} bytes over many lines`, text: `time,v,note\n${TIME},1,"${body}"\n${isoAt(1)},2,x\n` };
}

/** `lines` empty lines (LF or CRLF) between a header and one row. */
export function manyEmptyLines(lines: number, crlf = false): AdversarialCsv {
  return { name: `${lines} empty lines`, text: `time,v\n${(crlf ? '\r\n' : '\n').repeat(lines)}${TIME},1\n` };
}

/** A multi-section file whose first section is `lines` lines long and which never reaches a data section. */
export function endlessPreamble(lines: number): AdversarialCsv {
  const preamble = Array.from({ length: lines }, (_, index) => `"Key${index}";"value ${index}"`).join('\n');
  return { name: `a preamble of ${lines} lines`, text: `"[CoreInfo]"\n${preamble}\n` };
}

/** A multi-section file with `sections` sections before its data table. */
export function manySections(sections: number): AdversarialCsv {
  const before = Array.from({ length: sections }, (_, index) => `"[Section${index}]"\n"a";"b"\n"1";"2"`).join('\n');
  return { name: `${sections} sections`, text: `${before}\n"[TrackData1]"\n"time";"v"\n"${TIME}";"1"\n"${isoAt(1)}";"2"\n` };
}

/** Lines of `cells` cells each mixing every candidate delimiter: hard work for a delimiter sniffer. */
export function wideDelimiterLines(cells: number, lines = 4): AdversarialCsv {
  const line = Array.from({ length: cells }, (_, index) => ',;\t|'[index % 4]).join('a');
  return { name: `${lines} lines of ${cells} mixed delimiters`, text: `${Array(lines).fill(line).join('\n')}\n` };
}

/** A section-marker-like first cell followed by `tabs` tabs and a letter (backtracking bait for a marker pattern). */
export function sectionMarkerWithTabs(tabs: number): AdversarialCsv {
  return { name: `a marker cell with ${tabs} tabs`, text: `"[TrackData1]"\n[a]${'\t'.repeat(tabs)}x,1\n` };
}

/** `lines` blank lines (spaces and line feeds) before a DASware-like bias line: bait for multi-line patterns. */
export function blankLinesBeforeBias(lines: number): AdversarialCsv {
  return { name: `${lines} blank lines before TimezoneBias`, text: `"[CoreInfo]"\n${' \n'.repeat(lines)}"TimezoneBias";120\n` };
}

/** Every shape at a size parameter `n` (roughly n KB each), for tests that run them all. */
export function adversarialCsvs(n: number): AdversarialCsv[] {
  return [
    wideHeaderShortRows(n * 5, n * 20),
    repeatedHeaderNames(n * 50),
    giantLine(n * 1024),
    giantQuotedField(n * 1024),
    manyEmptyLines(n * 1024),
    endlessPreamble(n * 40),
    manySections(n * 20),
    wideDelimiterLines(n * 200),
    sectionMarkerWithTabs(n * 100),
    blankLinesBeforeBias(n * 500),
  ];
}
