/**
 * Row filters of a CSV upload: calibrators, controls and blanks written among the samples are left
 * out by a rule on one column (equals, does not equal, or matches a pattern). The worker applies them
 * to every row and counts what each filter left out, by the value the row had, so nothing is dropped
 * silently; the wizard suggests filters when a column such as `Sample Type` holds such values.
 */
import { z } from 'zod';

export const ROW_FILTER_OPERATORS = ['equals', 'not_equals', 'matches'] as const;
export type RowFilterOperator = (typeof ROW_FILTER_OPERATORS)[number];

/** Filters one upload may carry, and values one filter may name. */
export const ROW_FILTER_LIMITS = { filters: 10, values: 50, valueLength: 200 } as const;
/** Distinct left-out values counted one by one per filter; the rest are counted together. */
export const ROW_FILTER_COUNTED_VALUES = 20;

export const rowFilterSchema = z.object({
  column: z.string().trim().min(1, 'row_filters: column must not be empty').max(100),
  operator: z.enum(ROW_FILTER_OPERATORS),
  values: z
    .array(z.string().trim().min(1, 'row_filters: values must not be empty').max(ROW_FILTER_LIMITS.valueLength))
    .min(1, 'row_filters: name at least one value')
    .max(ROW_FILTER_LIMITS.values, `row_filters: at most ${ROW_FILTER_LIMITS.values} values per filter`),
});
export type RowFilter = z.infer<typeof rowFilterSchema>;

export const rowFiltersSchema = z.array(rowFilterSchema).max(ROW_FILTER_LIMITS.filters, `At most ${ROW_FILTER_LIMITS.filters} row filters`);

/**
 * Whether `text` matches a pattern where `*` stands for any characters and `?` for one, ignoring case.
 * Iterative with one back-tracking point, so a hostile pattern costs at most text x pattern steps,
 * never an exponential search (a regular expression of several `.*` can).
 */
export function matchesWildcard(text: string, pattern: string): boolean {
  const value = text.toLowerCase();
  const glob = pattern.toLowerCase();
  let t = 0;
  let p = 0;
  let star = -1;
  let resume = 0;
  while (t < value.length) {
    if (p < glob.length && (glob[p] === '?' || (glob[p] !== '*' && glob[p] === value[t]))) {
      t += 1;
      p += 1;
    } else if (p < glob.length && glob[p] === '*') {
      star = p;
      resume = t;
      p += 1;
    } else if (star !== -1) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < glob.length && glob[p] === '*') p += 1;
  return p === glob.length;
}

/** Whether the filter leaves out a row whose cell in its column is `cell`. */
export function leavesOut(filter: RowFilter, cell: string): boolean {
  const value = cell.trim();
  switch (filter.operator) {
    case 'equals': return filter.values.some((entry) => entry.toLowerCase() === value.toLowerCase());
    case 'not_equals': return !filter.values.some((entry) => entry.toLowerCase() === value.toLowerCase());
    case 'matches': return filter.values.some((entry) => matchesWildcard(value, entry));
  }
}

/** What one filter left out: rows in all, and per value the row had (the first 20 values; the rest in `other_rows`). */
export interface RowFilterCount {
  column: string;
  operator: RowFilterOperator;
  values: string[];
  rows: number;
  by_value: Array<{ value: string; rows: number }>;
  other_rows: number;
}

export function emptyRowFilterCounts(filters: readonly RowFilter[]): RowFilterCount[] {
  return filters.map((filter) => ({ column: filter.column, operator: filter.operator, values: [...filter.values], rows: 0, by_value: [], other_rows: 0 }));
}

export function countLeftOutRow(count: RowFilterCount, cell: string): void {
  count.rows += 1;
  const value = cell.trim();
  const entry = count.by_value.find((seen) => seen.value === value);
  if (entry) entry.rows += 1;
  else if (count.by_value.length < ROW_FILTER_COUNTED_VALUES) count.by_value.push({ value, rows: 1 });
  else count.other_rows += 1;
}

const OPERATOR_WORDS: Record<RowFilterOperator, string> = { equals: 'is', not_equals: 'is not', matches: 'matches' };

/** 'Sample Type is Calibrator or Control' */
export function describeRowFilter(filter: Pick<RowFilter, 'column' | 'operator' | 'values'>): string {
  return `${filter.column} ${OPERATOR_WORDS[filter.operator]} ${filter.values.join(' or ')}`;
}

/**
 * 'Left out by row filters: 14 rows where Sample Type is Calibrator or Control (12 Calibrator, 2 Control).'
 * (null when no filter left a row out).
 */
export function rowFiltersMessage(counts: readonly RowFilterCount[]): string | null {
  const used = counts.filter((count) => count.rows > 0);
  if (used.length === 0) return null;
  const number = (value: number) => value.toLocaleString('en-US');
  const parts = used.map((count) => {
    const values = count.by_value.map((entry) => `${number(entry.rows)} ${entry.value === '' ? '(empty)' : entry.value}`);
    if (count.other_rows > 0) values.push(`${number(count.other_rows)} other`);
    return `${number(count.rows)} row${count.rows === 1 ? '' : 's'} where ${describeRowFilter(count)} (${values.join(', ')})`;
  });
  return `Left out by row filters: ${parts.join('; ')}.`;
}

/** Column names that say what kind of row it is (a sample, a calibrator, a blank). */
const ROW_KIND_COLUMN = /^(sample[\s_-]*type|type|row[\s_-]*type|kind|sample[\s_-]*kind|role|sample[\s_-]*role|category|class)$/i;
/** Values naming rows that are not samples of the process. */
const NOT_A_SAMPLE = /^(cal|calibrator|calibration|calib|std|standard|control|ctrl|qc|blank|blk|reference|ref|buffer|wash)(\s*\d+)?$/i;

/**
 * Filters worth suggesting: for a column named like a row kind, leave out the rows whose value names
 * a calibrator, control, standard or blank (as written in the file). Answers nothing when no such
 * column or value is in the rows.
 */
export function suggestRowFilters(headers: readonly string[], rows: readonly (readonly string[])[]): RowFilter[] {
  const suggestions: RowFilter[] = [];
  headers.forEach((column, index) => {
    if (!ROW_KIND_COLUMN.test(column.trim())) return;
    const values = new Set<string>();
    for (const row of rows) {
      const value = (row[index] ?? '').trim();
      if (value !== '' && NOT_A_SAMPLE.test(value)) values.add(value);
      if (values.size >= ROW_FILTER_LIMITS.values) break;
    }
    if (values.size > 0) suggestions.push({ column, operator: 'equals', values: [...values] });
  });
  return suggestions.slice(0, ROW_FILTER_LIMITS.filters);
}
