/**
 * The tables of the data-management page: which columns each entity shows (id,
 * organisation id and equipment status stay hidden), how a cell is displayed (ids as names with their
 * fallbacks, formatted dates), search over the displayed text, and sorting.
 */
import { formatDate } from '../entities/format.ts';
import type { EntityKind } from '../entities/entity-forms.ts';

export type DataEntityKind = Exclude<EntityKind, 'run'>;

export const DATA_ENTITIES: readonly { kind: DataEntityKind; label: string; singular: string; path: string }[] = [
  { kind: 'equipment', label: 'Equipment', singular: 'Equipment', path: '/api/v1/equipment' },
  { kind: 'facility', label: 'Facilities', singular: 'Facility', path: '/api/v1/facilities' },
  { kind: 'instrument', label: 'Instruments', singular: 'Instrument', path: '/api/v1/instruments' },
];

export interface DataColumn {
  /** The camelCase field of the row. */
  key: string;
  label: string;
  kind: 'text' | 'facility' | 'equipment' | 'date';
}

const DATES: DataColumn[] = [
  { key: 'createdAt', label: 'Created', kind: 'date' },
  { key: 'updatedAt', label: 'Updated', kind: 'date' },
];

export const DATA_COLUMNS: Record<DataEntityKind, readonly DataColumn[]> = {
  equipment: [
    { key: 'name', label: 'Name', kind: 'text' },
    { key: 'type', label: 'Type', kind: 'text' },
    { key: 'oem', label: 'OEM', kind: 'text' },
    { key: 'facilityId', label: 'Facility', kind: 'facility' },
    ...DATES,
  ],
  facility: [
    { key: 'name', label: 'Name', kind: 'text' },
    { key: 'type', label: 'Type', kind: 'text' },
    { key: 'country', label: 'Country', kind: 'text' },
    { key: 'address', label: 'Address', kind: 'text' },
    ...DATES,
  ],
  instrument: [
    { key: 'name', label: 'Name', kind: 'text' },
    { key: 'type', label: 'Type', kind: 'text' },
    { key: 'unit', label: 'Unit', kind: 'text' },
    { key: 'alias', label: 'Alias', kind: 'text' },
    { key: 'equipmentId', label: 'Equipment', kind: 'equipment' },
    ...DATES,
  ],
};

export type DataRow = { id: number } & Record<string, unknown>;

export interface NameResolvers {
  facility: (id: number | null | undefined) => string;
  equipment: (id: number | null | undefined) => string;
}

export function displayValue(row: DataRow, column: DataColumn, names: NameResolvers): string {
  const raw = row[column.key];
  switch (column.kind) {
    case 'facility': return names.facility(raw as number | null | undefined);
    case 'equipment': return names.equipment(raw as number | null | undefined);
    case 'date': return formatDate(raw as string | null | undefined, 'dateTime');
    default: return raw === null || raw === undefined || raw === '' ? '-' : String(raw);
  }
}

/** Case-insensitive match of the search text against any displayed cell. */
export function searchRows(rows: readonly DataRow[], columns: readonly DataColumn[], names: NameResolvers, search: string): DataRow[] {
  const needle = search.trim().toLowerCase();
  if (!needle) return [...rows];
  return rows.filter((row) => columns.some((column) => displayValue(row, column, names).toLowerCase().includes(needle)));
}

export interface SortState {
  key: string;
  direction: 'asc' | 'desc';
}

/** Dates sort by time, everything else by its displayed text (natural order for numbers in names). */
export function sortRows(rows: readonly DataRow[], columns: readonly DataColumn[], names: NameResolvers, sort: SortState | null): DataRow[] {
  if (!sort) return [...rows];
  const column = columns.find((candidate) => candidate.key === sort.key);
  if (!column) return [...rows];
  const factor = sort.direction === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    if (column.kind === 'date') {
      const left = Date.parse(String(a[column.key] ?? '')) || 0;
      const right = Date.parse(String(b[column.key] ?? '')) || 0;
      return (left - right) * factor;
    }
    return displayValue(a, column, names).localeCompare(displayValue(b, column, names), undefined, { numeric: true, sensitivity: 'base' }) * factor;
  });
}

/** Column header clicks cycle ascending, descending, unsorted. */
export function nextSort(current: SortState | null, key: string): SortState | null {
  if (current?.key !== key) return { key, direction: 'asc' };
  return current.direction === 'asc' ? { key, direction: 'desc' } : null;
}
