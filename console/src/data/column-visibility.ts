/**
 * The data-management column toggle, remembered per entity in the browser's local storage.
 * Stored as the list of hidden columns so a column added later shows up by default.
 */
export const COLUMN_STORAGE_PREFIX = 'data-management.hidden-columns.';

type KeyValueStorage = Pick<Storage, 'getItem' | 'setItem'>;

function defaultStorage(): KeyValueStorage | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    return null;
  }
}

export function loadHiddenColumns(entity: string, storage: KeyValueStorage | null = defaultStorage()): string[] {
  const raw = storage?.getItem(`${COLUMN_STORAGE_PREFIX}${entity}`);
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? parsed.filter((key): key is string => typeof key === 'string') : [];
  } catch {
    // A hand-edited or corrupted value must not break the page: fall back to every column.
    return [];
  }
}

export function saveHiddenColumns(entity: string, hidden: readonly string[], storage: KeyValueStorage | null = defaultStorage()): void {
  try {
    storage?.setItem(`${COLUMN_STORAGE_PREFIX}${entity}`, JSON.stringify(hidden));
  } catch {
    // A full or disabled storage only loses the preference, never the page.
  }
}
