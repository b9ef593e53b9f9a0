import { describe, expect, it } from 'vitest';
import { nameLookup } from '../entities/name-lookup.ts';
import { loadHiddenColumns, saveHiddenColumns } from './column-visibility.ts';
import { DATA_COLUMNS, displayValue, nextSort, searchRows, sortRows, type DataRow } from './entity-tables.ts';

const names = {
  facility: nameLookup([{ id: 1, name: 'Delft Pilot Plant' }], 'Facility'),
  equipment: nameLookup([{ id: 5, name: 'Bioreactor 2L' }], 'Equipment'),
};
const columns = DATA_COLUMNS.instrument;
const rows: DataRow[] = [
  { id: 1, name: 'pH probe 10', type: 'pH', unit: 'pH', alias: null, equipmentId: 5, createdAt: '2025-03-01T10:00:00', updatedAt: '2025-03-02T10:00:00' },
  { id: 2, name: 'pH probe 9', type: 'pH', unit: null, alias: 'PH9', equipmentId: 77, createdAt: '2025-01-01T10:00:00', updatedAt: '2025-01-01T10:00:00' },
  { id: 3, name: 'Titer', type: 'titer', unit: 'g/L', alias: null, equipmentId: null, createdAt: '2025-02-01T10:00:00', updatedAt: '2025-02-01T10:00:00' },
];

describe('data-management columns', () => {
  it('hides id, organisation id and equipment status', () => {
    for (const list of Object.values(DATA_COLUMNS)) {
      expect(list.map((column) => column.key)).not.toContain('id');
      expect(list.map((column) => column.key)).not.toContain('organizationId');
      expect(list.map((column) => column.key)).not.toContain('status');
    }
  });
  it('shows ids as names with the fallbacks', () => {
    const equipment = columns.find((column) => column.key === 'equipmentId')!;
    expect(rows.map((row) => displayValue(row, equipment, names))).toEqual(['Bioreactor 2L', 'Equipment 77', 'N/A']);
    const facility = DATA_COLUMNS.equipment.find((column) => column.key === 'facilityId')!;
    expect(displayValue({ id: 9, facilityId: 4 }, facility, names)).toBe('Facility 4');
  });
  it('formats dates and dashes empty cells', () => {
    expect(displayValue(rows[0]!, columns.find((column) => column.key === 'createdAt')!, names)).toBe('2025-03-01 10:00');
    expect(displayValue(rows[0]!, columns.find((column) => column.key === 'alias')!, names)).toBe('-');
  });
});

describe('search and sort', () => {
  it('searches the displayed text case-insensitively', () => {
    expect(searchRows(rows, columns, names, 'bioreactor').map((row) => row.id)).toEqual([1]);
    expect(searchRows(rows, columns, names, 'G/L').map((row) => row.id)).toEqual([3]);
    expect(searchRows(rows, columns, names, '  ').map((row) => row.id)).toEqual([1, 2, 3]);
  });
  it('sorts names naturally and dates by time, cycling the direction', () => {
    expect(sortRows(rows, columns, names, { key: 'name', direction: 'asc' }).map((row) => row.id)).toEqual([2, 1, 3]);
    expect(sortRows(rows, columns, names, { key: 'createdAt', direction: 'desc' }).map((row) => row.id)).toEqual([1, 3, 2]);
    expect(nextSort(null, 'name')).toEqual({ key: 'name', direction: 'asc' });
    expect(nextSort({ key: 'name', direction: 'asc' }, 'name')).toEqual({ key: 'name', direction: 'desc' });
    expect(nextSort({ key: 'name', direction: 'desc' }, 'name')).toBeNull();
  });
});

describe('column visibility storage', () => {
  it('remembers hidden columns per entity and survives bad values', () => {
    const store = new Map<string, string>();
    const storage = { getItem: (key: string) => store.get(key) ?? null, setItem: (key: string, value: string) => void store.set(key, value) };
    saveHiddenColumns('equipment', ['oem'], storage);
    expect(loadHiddenColumns('equipment', storage)).toEqual(['oem']);
    expect(loadHiddenColumns('facility', storage)).toEqual([]);
    store.set('data-management.hidden-columns.facility', '{not json');
    expect(loadHiddenColumns('facility', storage)).toEqual([]);
  });
});
