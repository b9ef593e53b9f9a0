import { describe, expect, it } from 'vitest';
import {
  countLeftOutRow, emptyRowFilterCounts, leavesOut, matchesWildcard, rowFiltersMessage, rowFiltersSchema, ROW_FILTER_COUNTED_VALUES, type RowFilter,
} from './row-filters.ts';

describe('row filters', () => {
  it('leaves out rows whose cell equals, does not equal or matches the values, ignoring case and blanks around', () => {
    const equals: RowFilter = { column: 'Type', operator: 'equals', values: ['Calibrator', 'Blank'] };
    expect(leavesOut(equals, ' calibrator ')).toBe(true);
    expect(leavesOut(equals, 'Sample')).toBe(false);
    const notEquals: RowFilter = { column: 'Type', operator: 'not_equals', values: ['Sample'] };
    expect(leavesOut(notEquals, 'Sample')).toBe(false);
    expect(leavesOut(notEquals, 'QC')).toBe(true);
    expect(leavesOut(notEquals, '')).toBe(true);
    const matches: RowFilter = { column: 'READING', operator: 'matches', values: ['R*', 'K'] };
    expect(leavesOut(matches, 'R')).toBe(true);
    expect(leavesOut(matches, 'R12')).toBe(true);
    expect(leavesOut(matches, 'C12')).toBe(false);
  });

  it('matches wildcards without backtracking blow-up', () => {
    expect(matchesWildcard('Plate1_61', 'plate?_*')).toBe(true);
    expect(matchesWildcard('Plate1_61', 'plate?_')).toBe(false);
    expect(matchesWildcard('abc', '*')).toBe(true);
    expect(matchesWildcard('', '*')).toBe(true);
    expect(matchesWildcard('', '?')).toBe(false);
    // A pattern of many stars against a long text that never matches: bounded work, answers quickly.
    expect(matchesWildcard('a'.repeat(5_000), `${'*a'.repeat(40)}b`)).toBe(false);
  });

  it('counts what each filter left out by value, the first 20 values one by one', () => {
    const [count] = emptyRowFilterCounts([{ column: 'Sample Type', operator: 'equals', values: ['Calibrator', 'Control'] }]);
    for (const value of ['Calibrator', 'Calibrator', 'Control']) countLeftOutRow(count!, value);
    expect(count).toMatchObject({ rows: 3, by_value: [{ value: 'Calibrator', rows: 2 }, { value: 'Control', rows: 1 }], other_rows: 0 });
    expect(rowFiltersMessage([count!])).toBe('Left out by row filters: 3 rows where Sample Type is Calibrator or Control (2 Calibrator, 1 Control).');
    const [many] = emptyRowFilterCounts([{ column: 'Well', operator: 'not_equals', values: ['A1'] }]);
    for (let index = 0; index < ROW_FILTER_COUNTED_VALUES + 5; index += 1) countLeftOutRow(many!, `B${index}`);
    expect(many!.by_value).toHaveLength(ROW_FILTER_COUNTED_VALUES);
    expect(many!.other_rows).toBe(5);
    expect(rowFiltersMessage(emptyRowFilterCounts([{ column: 'x', operator: 'equals', values: ['y'] }]))).toBeNull();
  });

  it('refuses filters without values or with an unknown operator', () => {
    expect(rowFiltersSchema.safeParse([{ column: 'Type', operator: 'equals', values: [] }]).success).toBe(false);
    expect(rowFiltersSchema.safeParse([{ column: 'Type', operator: 'like', values: ['x'] }]).success).toBe(false);
    expect(rowFiltersSchema.safeParse([{ column: 'Type', operator: 'matches', values: ['C*'] }]).success).toBe(true);
  });
});
