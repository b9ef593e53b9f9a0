/**
 * Reports that hold one sample as key/value lines instead of a table: a cell counter's per-sample
 * report (`Sample ID : CLB001`, `Viability (%) : 97.0`, Vi-CELL XR) or a count written as
 * `Viability (%);68.2;` (NucleoView). Each key becomes a column of a one-row table, so the report
 * import reads it like a wide report with one sample; each value keeps its own line for the errors.
 *
 * Recognised, not assumed: a text is a key/value report only when most of its lines are pairs of a
 * worded key (letters and spaces or a unit in brackets, as people write them) and a value, the keys
 * are distinct, and the values mix text and numbers. A two-column table (time and value, sample and
 * result) does not pass: its keys are timestamps or ids and its values are all numbers.
 * Lines that are not pairs name a section (`Results:`, `Settings:`); keys of a settings section are
 * marked so that the import does not propose them as results (a minimum diameter is a setting).
 */

export interface KeyValuePair {
  key: string;
  value: string;
  /** 1-based line in the decoded text. */
  line: number;
  /** The heading above the pair (`Results`, `Settings`), or null. */
  section: string | null;
}

export interface KeyValueReport {
  /** What splits key from value: ' : ', ':', '=', ';', a tab or ','. */
  separator: string;
  pairs: KeyValuePair[];
}

export interface KeyValueTable {
  /** The keys, a repeated key numbered (`Comment (2)`). */
  headers: string[];
  values: string[];
  lines: number[];
  /** Keys under a settings, parameters or protocol heading: instrument settings, not results. */
  settingKeys: string[];
}

/** Tried in order: a spaced colon first (its values may hold colons and commas), a comma last (its values may be lists). */
const SEPARATORS = [' : ', '\t', ';', '=', ':', ','] as const;
const CELL_SEPARATORS = new Set<string>(['\t', ';', ',']);
const SETTING_SECTION = /setting|parameter|protocol|configuration|set.?up/i;
/** At least this many pairs: a title and two lines are no report. */
const MIN_PAIRS = 5;

const isNumber = (text: string) => /^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?$/.test(text.replace(/\s/g, ''));

type LineReading = { kind: 'blank' } | { kind: 'pair'; key: string; value: string } | { kind: 'heading'; text: string } | { kind: 'row' };

function readLine(line: string, separator: string): LineReading {
  const text = line.trim();
  if (text === '') return { kind: 'blank' };
  if (CELL_SEPARATORS.has(separator)) {
    const cells = line.split(separator).map((cell) => cell.trim().replace(/^"(.*)"$/, '$1').trim());
    while (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
    if (cells.length === 0) return { kind: 'blank' };
    if (cells.length === 1) return { kind: 'heading', text: cells[0]! };
    if (cells.length === 2 && cells[0] !== '') return { kind: 'pair', key: cells[0]!, value: cells[1]! };
    return { kind: 'row' };
  }
  // `Time :` has a key and no value; `Results:` (no space before the colon) is a heading under ' : '.
  const bare = separator.trim();
  if (separator !== bare && text.endsWith(` ${bare}`)) return { kind: 'pair', key: text.slice(0, -bare.length - 1).trim(), value: '' };
  const at = text.indexOf(separator);
  if (at <= 0) return { kind: 'heading', text: text.replace(/:\s*$/, '').trim() };
  return { kind: 'pair', key: text.slice(0, at).trim(), value: text.slice(at + separator.length).trim() };
}

function readWith(lines: readonly string[], separator: string): KeyValueReport | null {
  const pairs: KeyValuePair[] = [];
  let section: string | null = null;
  let contentful = 0;
  let rows = 0;
  lines.forEach((line, index) => {
    const reading = readLine(line, separator);
    if (reading.kind === 'blank') return;
    contentful += 1;
    if (reading.kind === 'row') rows += 1;
    else if (reading.kind === 'heading') section = reading.text;
    else pairs.push({ key: reading.key, value: reading.value, line: index + 1, section });
  });
  if (pairs.length < MIN_PAIRS || pairs.length < 0.6 * contentful || rows > 0.1 * contentful) return null;
  const worded = pairs.filter((pair) => /[a-z]/i.test(pair.key) && /\s|[[(]/.test(pair.key)).length;
  const distinct = new Set(pairs.map((pair) => pair.key.toLowerCase())).size;
  const values = pairs.map((pair) => pair.value).filter((value) => value !== '');
  const numbers = values.filter(isNumber).length;
  if (worded < 0.5 * pairs.length || distinct < 0.8 * pairs.length || numbers < 2 || values.length - numbers < 2) return null;
  return { separator, pairs };
}

/** The report's key/value pairs, or null when the text is not a key/value report (a table, prose). */
export function readKeyValueReport(text: string): KeyValueReport | null {
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r?\n/);
  // The first separator that reads the text as pairs: a bare colon also splits `Results:`, which
  // under ' : ' is the heading it is meant as.
  for (const separator of SEPARATORS) {
    const report = readWith(lines, separator);
    if (report) return report;
  }
  return null;
}

/** The pairs as the one-row table the report import reads. */
export function keyValueTable(report: KeyValueReport): KeyValueTable {
  const seen = new Map<string, number>();
  const table: KeyValueTable = { headers: [], values: [], lines: [], settingKeys: [] };
  for (const pair of report.pairs) {
    const count = (seen.get(pair.key.toLowerCase()) ?? 0) + 1;
    seen.set(pair.key.toLowerCase(), count);
    const header = count === 1 ? pair.key : `${pair.key} (${count})`;
    table.headers.push(header);
    table.values.push(pair.value);
    table.lines.push(pair.line);
    if (pair.section && SETTING_SECTION.test(pair.section)) table.settingKeys.push(header);
  }
  return table;
}
