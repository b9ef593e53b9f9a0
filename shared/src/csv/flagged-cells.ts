/**
 * Flagged cells: what instruments write in a numeric column instead of a number (a detection limit,
 * an overflow, a value they could not compute). Such a cell is stored as a missing value and counted
 * per column in the job's result with its raw text, so one flag never fails a file and never becomes
 * a made-up number. Text that is no recognised flag (a column of names mapped by mistake) still fails
 * the upload with the non-numeric listing: that is a wrong mapping, not an instrument's flag.
 *
 * Decisions, in one place:
 * - `< 8.706`, `> 50`, `<LOQ`, `≤ 0.1`: below or above a limit; the number is a limit, not a reading.
 * - `10.00%`: the number 10 when the column's unit is % (its header says `%`), else a flag: a percent
 *   in a column of another unit is not that unit's value.
 * - Overflow and error words (`OVRFLW`, `OVER`, `ERROR`, `SAT`, ...), runs of `?`, `*` or `-`,
 *   spreadsheet errors (`#N/A`, `#DIV/0!`), `NaN`, `n/a`, `NA`, `null`, `Infinity`: flags.
 * - Sentinel numbers such as `-9999` are numbers: only the upload's `missing_values` (the user's
 *   choice in the wizard) makes them missing, because a real reading may be that number.
 * - An empty cell is a missing value as before and is not counted as flagged.
 */
import { parseNumericCell, type NumericCellOptions } from './numeric.ts';

export const FLAG_KINDS = ['below-limit', 'above-limit', 'not-a-number', 'percent', 'missing-value'] as const;
export type FlagKind = (typeof FLAG_KINDS)[number];

/** Raw texts kept per flagged column in the job result. */
export const FLAGGED_EXAMPLES_PER_COLUMN = 5;
/** Values one upload may name as missing (`missing_values`). */
export const MAX_MISSING_VALUES = 20;

const LIMIT_FLAG = /^(<=?|>=?|≤|≥)\s*\S/;
const FLAG_WORDS = new Set([
  'nan', 'n/a', 'na', 'n.a.', 'null', 'none', 'inf', '+inf', '-inf', 'infinity', '+infinity', '-infinity', '∞',
  'ovrflw', 'overflow', 'over', 'ovrrng', 'overrange', 'over range', 'out of range', 'oor', 'range', 'underflow', 'under',
  'err', 'error', 'invalid', 'sat', 'saturated', 'high', 'low', 'hi', 'lo', 'fail', 'failed', 'unknown', 'masked',
]);
const FLAG_RUN = /^(\?+|\*+|-{2,}|#+)$/;
const SPREADSHEET_ERROR = /^#(N\/A|VALUE!|DIV\/0!|NUM!|REF!|NAME\?|NULL!|SPILL!|CALC!)$/i;
const PERCENT_NUMBER = /^([^%]+?)\s*%$/;
/** A header naming % as its unit: `Viability [%]`, `DO (%)`, `Sparging O2%`, `% sat`. */
const PERCENT_HEADER = /(\[\s*%\s*\]|\(\s*%\s*\)|%\s*$|^\s*%)/;

export function isPercentColumn(header: string): boolean {
  return PERCENT_HEADER.test(header);
}

export interface CellReadOptions extends NumericCellOptions {
  /** The column's unit is %: `10.00%` is 10. */
  percentUnit?: boolean;
}

/** A cell that is not a plain number: its value (a number or missing), or null when it is no flag (the upload then fails). */
export interface FlaggedRead {
  value: number | null;
  /** Set when the cell is a flag stored as missing. */
  flag: FlagKind | null;
}

/**
 * Reads a cell parseNumericCell refused (NaN): a flag (missing), a percent number in a % column, or
 * null when the text is none of these.
 */
export function readFlaggedCell(raw: string, options: CellReadOptions = {}): FlaggedRead | null {
  const text = raw.trim();
  if (LIMIT_FLAG.test(text)) return { value: null, flag: text.startsWith('<') || text.startsWith('≤') ? 'below-limit' : 'above-limit' };
  const percent = PERCENT_NUMBER.exec(text);
  if (percent) {
    const number = parseNumericCell(percent[1]!, options);
    if (number !== null && !Number.isNaN(number)) return options.percentUnit ? { value: number, flag: null } : { value: null, flag: 'percent' };
  }
  const lower = text.toLowerCase();
  if (FLAG_WORDS.has(lower) || FLAG_RUN.test(text) || SPREADSHEET_ERROR.test(text)) return { value: null, flag: 'not-a-number' };
  return null;
}

/**
 * The user's missing values (`-9999`, `OVER`): numeric ones match any spelling of the number
 * (`-9999.00`), others match the trimmed text exactly.
 */
export class MissingValues {
  readonly numbers: number[];
  private readonly texts: Set<string>;

  constructor(values: readonly string[] = []) {
    this.numbers = [];
    this.texts = new Set();
    for (const value of values) {
      const number = parseNumericCell(value);
      if (number !== null && !Number.isNaN(number)) this.numbers.push(number);
      else if (value.trim() !== '') this.texts.add(value.trim());
    }
  }

  get any(): boolean {
    return this.numbers.length > 0 || this.texts.size > 0;
  }

  isMissingNumber(value: number): boolean {
    for (let index = 0; index < this.numbers.length; index += 1) if (this.numbers[index] === value) return true;
    return false;
  }

  isMissingText(raw: string): boolean {
    return this.texts.size > 0 && this.texts.has(raw.trim());
  }
}

/** One column's flagged cells as the job result reports them. */
export interface FlaggedColumnCount {
  column: string;
  /** Long format: the key whose rows these are. */
  key: string | null;
  count: number;
  /** The first distinct raw texts, as written (at most FLAGGED_EXAMPLES_PER_COLUMN). */
  examples: string[];
}

/** Adds one flagged cell to a column's count (plain data: it travels in the upload's resume point). */
export function countFlaggedCell(entry: { count: number; examples: string[] }, raw: string): void {
  entry.count += 1;
  const text = raw.trim();
  if (entry.examples.length < FLAGGED_EXAMPLES_PER_COLUMN && !entry.examples.includes(text)) entry.examples.push(text);
}

/** The sentence the job result and the console show, or null when no cell was flagged. */
export function flaggedCellsMessage(columns: readonly FlaggedColumnCount[]): string | null {
  const flagged = columns.filter((column) => column.count > 0);
  if (flagged.length === 0) return null;
  const total = flagged.reduce((sum, column) => sum + column.count, 0);
  const parts = flagged.map((column) => {
    const name = column.key === null ? column.column : `${column.column} (${column.key})`;
    return `${name}: ${column.count.toLocaleString('en-US')} (${column.examples.map((example) => `'${example}'`).join(', ')})`;
  });
  return `${total.toLocaleString('en-US')} flagged cell(s) stored as missing values: ${parts.join('; ')}.`;
}
