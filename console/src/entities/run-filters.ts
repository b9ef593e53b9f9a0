/**
 * The add-filter control of the All runs page: which columns can be filtered, with which
 * operators, how the value is converted, and how a filter matches a run.
 */
import { RUN_STATUSES } from '@bioprocess/shared/enums';
import { format, isValid, parseISO } from 'date-fns';
import { statusOf } from './run-metrics.ts';
import type { Run } from './types.ts';

export const FILTER_OPERATORS = ['equals', 'contains', 'greater_than', 'less_than', 'greater_equal', 'less_equal'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const OPERATOR_LABELS: Record<FilterOperator, string> = {
  equals: 'equals',
  contains: 'contains',
  greater_than: 'greater than',
  less_than: 'less than',
  greater_equal: 'greater or equal',
  less_equal: 'less or equal',
};

export type FilterColumnKey = 'name' | 'strain' | 'target' | 'startTime' | 'endTime' | 'scaleLiters' | 'status';
type FilterKind = 'text' | 'select' | 'date' | 'number';

export interface FilterColumn {
  key: FilterColumnKey;
  label: string;
  kind: FilterKind;
  operators: readonly FilterOperator[];
}

const EQUALITY_OPERATORS = ['equals', 'contains'] as const satisfies readonly FilterOperator[];

export const FILTER_COLUMNS: readonly FilterColumn[] = [
  { key: 'name', label: 'Name', kind: 'text', operators: EQUALITY_OPERATORS },
  { key: 'strain', label: 'Strain', kind: 'select', operators: EQUALITY_OPERATORS },
  { key: 'target', label: 'Target', kind: 'select', operators: EQUALITY_OPERATORS },
  { key: 'startTime', label: 'Start Time', kind: 'date', operators: FILTER_OPERATORS },
  { key: 'endTime', label: 'End Time', kind: 'date', operators: FILTER_OPERATORS },
  { key: 'scaleLiters', label: 'Scale (L)', kind: 'number', operators: FILTER_OPERATORS },
  { key: 'status', label: 'Status', kind: 'select', operators: EQUALITY_OPERATORS },
];

export interface RunFilter {
  column: FilterColumnKey;
  operator: FilterOperator;
  /** A number for number columns (converted when the filter is added), text otherwise. */
  value: string | number;
}

export function filterColumn(key: FilterColumnKey): FilterColumn {
  const column = FILTER_COLUMNS.find((candidate) => candidate.key === key);
  if (!column) throw new Error(`Unknown filter column ${key}`);
  return column;
}

/** The choices of a select column: the distinct existing values (statuses are fixed). */
export function selectOptions(column: FilterColumnKey, runs: readonly Run[]): string[] {
  if (column === 'status') return [...RUN_STATUSES];
  const values = new Set<string>();
  for (const run of runs) {
    const value = run[column as 'strain' | 'target'];
    if (typeof value === 'string' && value.trim() !== '') values.add(value);
  }
  return [...values].sort((a, b) => a.localeCompare(b));
}

export type FilterDraft = { column: FilterColumnKey | ''; operator: FilterOperator; value: string };

/**
 * Turns what the user picked into a filter: the column and a non-blank value are required, and a
 * number column's value must convert to a number. Answers the problem as text otherwise.
 */
export function buildFilter(draft: FilterDraft): { filter: RunFilter } | { error: string } {
  if (!draft.column) return { error: 'Select a column.' };
  const column = filterColumn(draft.column);
  const value = draft.value.trim();
  if (value === '') return { error: 'Enter a value.' };
  const operator = column.operators.includes(draft.operator) ? draft.operator : column.operators[0]!;
  if (column.kind === 'number') {
    const number = Number(value.replace(',', '.'));
    if (!Number.isFinite(number)) return { error: 'Enter a number.' };
    return { filter: { column: column.key, operator, value: number } };
  }
  return { filter: { column: column.key, operator, value } };
}

function compare<T extends string | number>(actual: T, expected: T, operator: FilterOperator): boolean {
  switch (operator) {
    case 'equals': return actual === expected;
    case 'contains': return String(actual).includes(String(expected));
    case 'greater_than': return actual > expected;
    case 'less_than': return actual < expected;
    case 'greater_equal': return actual >= expected;
    case 'less_equal': return actual <= expected;
  }
}

/**
 * Dates compare at the precision of the filter value: a date input ('2025-03-01') matches the whole
 * local day, a date-time ('2025-03-01T10:30') the minute.
 */
function dateKey(value: string, precision: 'day' | 'minute'): string | null {
  const date = parseISO(value);
  if (!isValid(date)) return null;
  return format(date, precision === 'day' ? 'yyyy-MM-dd' : "yyyy-MM-dd'T'HH:mm");
}

export function matchesFilter(run: Run, filter: RunFilter, now: Date = new Date()): boolean {
  const column = filterColumn(filter.column);
  if (column.kind === 'number') {
    const actual = run[filter.column as 'scaleLiters'];
    if (actual === null || actual === undefined) return false;
    return compare(actual, Number(filter.value), filter.operator);
  }
  if (column.kind === 'date') {
    const raw = run[filter.column as 'startTime' | 'endTime'];
    const expected = String(filter.value).trim();
    if (filter.operator === 'contains') {
      // A partial date ('2025-03') is matched as text against the displayed date and time.
      const shown = raw ? dateKey(raw, 'minute') : null;
      return shown !== null && shown.replace('T', ' ').includes(expected.replace('T', ' '));
    }
    const precision = expected.includes('T') ? 'minute' : 'day';
    const actual = raw ? dateKey(raw, precision) : null;
    const wanted = dateKey(expected, precision);
    if (actual === null || wanted === null) return false;
    return compare(actual, wanted, filter.operator);
  }
  const actual = filter.column === 'status' ? statusOf(run, now) : run[filter.column as 'name' | 'strain' | 'target'];
  if (actual === null || actual === undefined) return false;
  return compare(actual.trim().toLowerCase(), String(filter.value).trim().toLowerCase(), filter.operator);
}

/** Every filter must match (they narrow the table one after the other). */
export function applyFilters(runs: readonly Run[], filters: readonly RunFilter[], now: Date = new Date()): Run[] {
  if (filters.length === 0) return [...runs];
  return runs.filter((run) => filters.every((filter) => matchesFilter(run, filter, now)));
}

export function describeFilter(filter: RunFilter): string {
  return `${filterColumn(filter.column).label} ${OPERATOR_LABELS[filter.operator]} ${filter.value}`;
}
