/**
 * The one CSV writer of the product (the audit export, data exports): RFC 4180 cells with CRLF line
 * ends, and text that a spreadsheet would run as a formula is neutralised.
 *
 * A text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel,
 * LibreOffice and Google Sheets as a formula (OWASP "CSV injection"), so anyone who can put text in a
 * record (an email typed at sign-in, a header that becomes the recorded address) could make the
 * admin's spreadsheet run it. Such a cell gets a leading single quote, which every spreadsheet shows
 * as text. Numbers are written as numbers: a reading of -1.5 must stay a number in the export, so only
 * values that are JavaScript numbers (or bigints) bypass the check; a numeric-looking string is text.
 * (csv-stringify's `escape_formulas` would quote negative numbers too, which is why this is our own.)
 */

export type CsvValue = string | number | bigint | boolean | Date | null | undefined | object;

const FORMULA_TRIGGER = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** The text a spreadsheet shows for a value: a formula-like text cell becomes literal text. */
export function neutralisedText(text: string): string {
  return FORMULA_TRIGGER.test(text) ? `'${text}` : text;
}

/** One cell: empty for null, numbers as they are, dates in ISO 8601, objects as JSON; quoted when needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const raw = value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value);
  const text = neutralisedText(raw);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, CRLF-terminated. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
