import { describe, expect, it } from 'vitest';
import { applyFilters, buildFilter, FILTER_COLUMNS, selectOptions, type RunFilter } from './run-filters.ts';
import { deriveStatus } from '@bioprocess/shared/status';
import type { Run } from './types.ts';

const now = new Date('2025-06-10T12:00:00Z');
const run = (fields: Partial<Run> & { id: number }): Run => ({
  organizationId: 1, facilityId: 1, name: `Run ${fields.id}`, strain: null, target: 'X', description: null, startTime: null, endTime: null,
  scaleLiters: null, scaleGrams: null, createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z',
  ...fields,
  status: fields.status ?? deriveStatus(fields.startTime, fields.endTime, now),
});
const runs: Run[] = [
  run({ id: 1, name: 'Batch A1', strain: 'E. coli', target: 'GFP', startTime: '2025-03-01T10:00:00', endTime: '2025-03-03T10:00:00', scaleLiters: 2 }),
  run({ id: 2, name: 'Batch B2', strain: 'P. pastoris', target: 'HSA', startTime: '2025-04-01T10:00:00', endTime: null, scaleLiters: 10 }),
  run({ id: 3, name: 'Pilot C3', strain: 'E. coli', target: 'Insulin', startTime: null, endTime: null, scaleLiters: null }),
];
const ids = (filters: RunFilter[]) => applyFilters(runs, filters, now).map((match) => match.id);

describe('buildFilter', () => {
  it('requires a column and a non-blank value', () => {
    expect(buildFilter({ column: '', operator: 'equals', value: 'x' })).toEqual({ error: 'Select a column.' });
    expect(buildFilter({ column: 'name', operator: 'equals', value: '   ' })).toEqual({ error: 'Enter a value.' });
  });
  it('converts number columns to numbers', () => {
    expect(buildFilter({ column: 'scaleLiters', operator: 'greater_than', value: '2,5' })).toEqual({ filter: { column: 'scaleLiters', operator: 'greater_than', value: 2.5 } });
    expect(buildFilter({ column: 'scaleLiters', operator: 'equals', value: 'ten' })).toEqual({ error: 'Enter a number.' });
  });
  it('keeps name to equals and contains', () => {
    expect(FILTER_COLUMNS.find((column) => column.key === 'name')?.operators).toEqual(['equals', 'contains']);
    expect(buildFilter({ column: 'name', operator: 'greater_than', value: 'a' })).toEqual({ filter: { column: 'name', operator: 'equals', value: 'a' } });
  });
});

describe('applyFilters', () => {
  it('matches text equals and contains case-insensitively', () => {
    expect(ids([{ column: 'name', operator: 'equals', value: 'batch a1' }])).toEqual([1]);
    expect(ids([{ column: 'name', operator: 'contains', value: 'BATCH' }])).toEqual([1, 2]);
    expect(ids([{ column: 'strain', operator: 'equals', value: 'E. coli' }])).toEqual([1, 3]);
  });
  it('compares numbers with every operator and skips runs without a value', () => {
    expect(ids([{ column: 'scaleLiters', operator: 'equals', value: 2 }])).toEqual([1]);
    expect(ids([{ column: 'scaleLiters', operator: 'greater_than', value: 2 }])).toEqual([2]);
    expect(ids([{ column: 'scaleLiters', operator: 'greater_equal', value: 2 }])).toEqual([1, 2]);
    expect(ids([{ column: 'scaleLiters', operator: 'less_than', value: 10 }])).toEqual([1]);
    expect(ids([{ column: 'scaleLiters', operator: 'less_equal', value: 10 }])).toEqual([1, 2]);
  });
  it('compares dates by day', () => {
    expect(ids([{ column: 'startTime', operator: 'equals', value: '2025-03-01' }])).toEqual([1]);
    expect(ids([{ column: 'startTime', operator: 'greater_than', value: '2025-03-01' }])).toEqual([2]);
    expect(ids([{ column: 'startTime', operator: 'greater_equal', value: '2025-03-01' }])).toEqual([1, 2]);
    expect(ids([{ column: 'startTime', operator: 'less_than', value: '2025-04-01' }])).toEqual([1]);
    expect(ids([{ column: 'startTime', operator: 'less_equal', value: '2025-04-01' }])).toEqual([1, 2]);
    expect(ids([{ column: 'endTime', operator: 'contains', value: '2025-03' }])).toEqual([1]);
  });
  it('filters on the derived status and combines filters', () => {
    expect(ids([{ column: 'status', operator: 'equals', value: 'Pending' }])).toEqual([3]);
    expect(ids([{ column: 'status', operator: 'equals', value: 'Completed' }])).toEqual([1]);
    expect(ids([{ column: 'strain', operator: 'equals', value: 'E. coli' }, { column: 'status', operator: 'equals', value: 'Completed' }])).toEqual([1]);
  });
});

describe('selectOptions', () => {
  it('offers the distinct existing values, statuses fixed', () => {
    expect(selectOptions('strain', runs)).toEqual(['E. coli', 'P. pastoris']);
    expect(selectOptions('status', runs)).toEqual(['Pending', 'Active', 'Completed']);
  });
});
