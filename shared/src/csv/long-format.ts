/**
 * Long format (one row per series and time): which columns say what series a row belongs to. A series
 * may be named by one key column (`position`) or by several together (well x channel, reactor x
 * parameter); its key is then the row's key cells joined, e.g. `A1 · OD600`. The detection suggests
 * the key columns when the time column repeats: the fewest key-like columns that, with the time,
 * tell every row apart.
 */
import { parseNumericCell } from './numeric.ts';

/** Joins the cells of a composite key into the series' key (`A1 · OD600`). */
export const KEY_JOINER = ' · ';

/** Key columns one long-format upload may combine. */
export const MAX_KEY_COLUMNS = 4;

/** The key of a row: its key cells, trimmed, joined (one cell: the cell itself). */
export function rowKey(row: readonly string[], keyIndexes: readonly number[]): string {
  if (keyIndexes.length === 1) return (row[keyIndexes[0]!] ?? '').trim();
  let key = '';
  for (let index = 0; index < keyIndexes.length; index += 1) {
    if (index > 0) key += KEY_JOINER;
    key += (row[keyIndexes[index]!] ?? '').trim();
  }
  return key;
}

/** The key columns of a mapping: `key_columns`, else the one `key_column`, else none (a wide file). */
export function keyColumnsOf(mapping: { key_column?: string; key_columns?: string[] }): string[] {
  if (mapping.key_columns && mapping.key_columns.length > 0) return mapping.key_columns;
  return mapping.key_column === undefined ? [] : [mapping.key_column];
}

/** A long-format file as the detection reads it. */
export interface LongFormatSuggestion {
  key_columns: string[];
  /** Numeric columns that are neither the time nor a key: the values of each series. */
  value_columns: string[];
  /** Distinct keys (combinations of the key columns) in the rows read. */
  keys: number;
}

/** Names that say a column tells series apart. */
const KEY_NAME = /^(well|wellnum|well ?id|position|pos|channel|reactor|vessel|bioreactor|unit|parameter|param|analyte|test|test ?code|assay|measurement|variable|tag|tag ?name|sensor|probe|signal|filterset|filter ?set|wavelength|sample|sample ?id|sample ?name|name|id|field|series|metric|_field|_measurement)$/i;

/** Rows the suggestion looks at: enough to see the keys of a typical export, bounded work. */
const SUGGESTION_ROWS = 5_000;
/** Cells the suggestion looks at, at most: a wide file gets fewer rows. */
const SUGGESTION_CELLS = 250_000;

interface Candidate { index: number; rank: number }

/** Names of a column that places each row in one well or vessel of a bank: its values recur, one per read. */
const POSITION_NAME = /^(well|wellnum|well ?id|position)$/i;

/**
 * The key columns of a long-format file, when its time column repeats: the first single column, else
 * pair, else triple of key-like columns (named like a key, then text, then whole numbers) under which
 * no time repeats. A column named like a key may be empty on some rows (a plate reader's reference,
 * process and event rows): such rows are no series' and are not counted. A plate reader that reads
 * each well at its own instant repeats no time, so a well or position column whose values recur is
 * long format too. A key column that changes within one series' rows (the filter set of a well read
 * in three channels) joins the key: one series never mixes channels. Null when neither holds (a wide
 * file) or no such columns exist.
 */
export function suggestLongFormat(
  headers: readonly string[], allRows: readonly (readonly string[])[], timeIndex: number, decimalComma: boolean,
): LongFormatSuggestion | null {
  if (timeIndex < 0) return null;
  const rowBudget = Math.max(2, Math.min(SUGGESTION_ROWS, Math.floor(SUGGESTION_CELLS / Math.max(1, headers.length))));
  const rows = allRows.slice(0, rowBudget).filter((row) => (row[timeIndex] ?? '').trim() !== '');
  if (rows.length < 2) return null;
  const times = new Set(rows.map((row) => row[timeIndex]!.trim()));
  const positionRecurs = headers.some((name, index) => {
    if (!POSITION_NAME.test(name.trim())) return false;
    const written = rows.map((row) => (row[index] ?? '').trim()).filter((cell) => cell !== '');
    return written.length >= rows.length / 2 && new Set(written).size <= written.length / 2;
  });
  if (times.size === rows.length && !positionRecurs) return null;

  const candidates: Candidate[] = [];
  const valueColumns: string[] = [];
  headers.forEach((name, index) => {
    if (index === timeIndex) return;
    const cells = rows.map((row) => (row[index] ?? '').trim());
    const written = cells.filter((cell) => cell !== '');
    if (written.length === 0) return;
    const numbers = written.map((cell) => parseNumericCell(cell, { decimalComma })).filter((value): value is number => value !== null && !Number.isNaN(value));
    const numeric = numbers.length === written.length;
    const distinct = new Set(written).size;
    if (KEY_NAME.test(name.trim()) && written.length >= cells.length / 2) candidates.push({ index, rank: 0 });
    else if (numbers.length < written.length / 2 && written.length === cells.length && distinct < rows.length) candidates.push({ index, rank: 1 });
    else if (numeric && written.length === cells.length && numbers.every(Number.isInteger) && distinct < rows.length) candidates.push({ index, rank: 2 });
    else if (numbers.length >= written.length / 2) valueColumns.push(name);
  });
  candidates.sort((a, b) => a.rank - b.rank || a.index - b.index);
  const pool = candidates.slice(0, 6);

  const unkeyed = (row: readonly string[], indexes: readonly number[]) => indexes.some((index) => (row[index] ?? '').trim() === '');
  const tellsApart = (indexes: readonly number[]): number | null => {
    const seen = new Set<string>();
    const keys = new Set<string>();
    for (const row of rows) {
      if (unkeyed(row, indexes)) continue;
      const key = rowKey(row, indexes);
      keys.add(key);
      const timed = `${key}\u0000${row[timeIndex]!.trim()}`;
      if (seen.has(timed)) return null;
      seen.add(timed);
    }
    return keys.size;
  };
  /** The column takes more than one value within some series of these key columns. */
  const changesWithin = (indexes: readonly number[], column: number): boolean => {
    const valueOf = new Map<string, string>();
    for (const row of rows) {
      const cell = (row[column] ?? '').trim();
      if (cell === '' || unkeyed(row, indexes)) continue;
      const key = rowKey(row, indexes);
      const known = valueOf.get(key);
      if (known === undefined) valueOf.set(key, cell);
      else if (known !== cell) return true;
    }
    return false;
  };
  const combinations: number[][] = [];
  for (const a of pool) combinations.push([a.index]);
  for (let i = 0; i < pool.length; i += 1) for (let j = i + 1; j < pool.length; j += 1) combinations.push([pool[i]!.index, pool[j]!.index]);
  for (let i = 0; i < pool.length; i += 1) {
    for (let j = i + 1; j < pool.length; j += 1) for (let k = j + 1; k < pool.length; k += 1) combinations.push([pool[i]!.index, pool[j]!.index, pool[k]!.index]);
  }
  for (const combination of combinations) {
    const keys = tellsApart(combination);
    if (keys === null) continue;
    const channels = pool.filter((candidate) => candidate.rank === 0 && !combination.includes(candidate.index) && changesWithin(combination, candidate.index));
    const keyColumns = [...combination, ...channels.map((candidate) => candidate.index)].slice(0, MAX_KEY_COLUMNS).sort((a, b) => a - b);
    const keyNames = keyColumns.map((index) => headers[index]!);
    const keyCount = keyColumns.length === combination.length ? keys : tellsApart(keyColumns) ?? keys;
    return { key_columns: keyNames, value_columns: valueColumns.filter((column) => !keyNames.includes(column)), keys: keyCount };
  }
  return null;
}

/** The distinct keys of the rows (composite keys joined), sorted naturally. */
export function distinctRowKeys(rows: readonly (readonly string[])[], keyIndexes: readonly number[]): string[] {
  const keys = new Set<string>();
  for (const row of rows) {
    if (keyIndexes.every((index) => (row[index] ?? '').trim() === '')) continue;
    keys.add(rowKey(row, keyIndexes));
  }
  return [...keys].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}
