/**
 * Files without a header row (Roche Cedex Bio HT archives, instrument logs): the columns are named
 * by position, `Column 1`, `Column 2`, ..., as the samples import names them, and the user may rename
 * them. The names travel with the upload (`reading.column_names`); the api writes them as the header
 * line of the table it cuts, so the worker reads the file like any other.
 */
import type { CsvDelimiter } from './row-parser.ts';

/** The name of a header-less file's column at a 0-based index. */
export function positionalColumnName(index: number): string {
  return `Column ${index + 1}`;
}

/** Rows looked at for the width of a header-less table: a file's rows may differ in width. */
const WIDTH_ROWS = 1_000;

/** The names of a header-less table's columns: as wide as its widest row (of the first 1,000), named as given, the rest by position. */
export function headerlessColumnNames(rows: readonly (readonly string[])[], given: readonly string[] = []): string[] {
  let width = given.length;
  for (const row of rows.slice(0, WIDTH_ROWS)) width = Math.max(width, row.length);
  return Array.from({ length: width }, (_, index) => given[index]?.trim() || positionalColumnName(index));
}

/** The header line a header-less table gets: the names quoted where they hold the delimiter, a line feed at the end. */
export function headerLineOf(names: readonly string[], delimiter: CsvDelimiter): string {
  return `${names.map((name) => (name.includes(delimiter) ? `"${name}"` : name)).join(delimiter)}\n`;
}
