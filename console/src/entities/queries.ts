/**
 * The organisation's lists as the run, data and settings screens share them (one SWR key per list,
 * so the dashboard, the runs table and the forms never fetch the same list twice), and the
 * revalidation after a change.
 */
import useSWR, { useSWRConfig } from 'swr';
import { useCallback } from 'react';
import type { ZodType } from 'zod';
import { LIST_LIMIT_MAX } from '@bioprocess/shared/pagination';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import {
  equipmentListSchema, facilityListSchema, instrumentListSchema, runListSchema,
  type Equipment, type Facility, type Instrument, type Run,
} from './types.ts';

export const RUNS_PATH = '/api/v1/runs';
export const FACILITIES_PATH = '/api/v1/facilities';
export const EQUIPMENT_PATH = '/api/v1/equipment';
export const INSTRUMENTS_PATH = '/api/v1/instruments';

/**
 * Reads a whole list page by page at the server's maximum page size, so an organisation with more
 * rows than one page still sees all of them.
 */
export async function fetchAllPages<T>(path: string, schema: ZodType, pageSize = LIST_LIMIT_MAX): Promise<T[]> {
  const rows: T[] = [];
  const separator = path.includes('?') ? '&' : '?';
  for (let offset = 0; ; offset += pageSize) {
    const page = await apiRequest<T[]>('GET', `${path}${separator}limit=${pageSize}&offset=${offset}`, undefined, { schema });
    rows.push(...(page ?? []));
    if (!page || page.length < pageSize) return rows;
  }
}

/** A list fetched only once signed in: a signed-out visitor never asks the API for data. */
function useList<T>(path: string, schema: ZodType) {
  const { user } = useAuth();
  // The organisation is part of the key: switching organisation must never show the previous one's rows.
  const key = user ? [path, user.organizationId] as const : null;
  return useSWR<T[], Error>(key, ([listPath]: readonly [string, number]) => fetchAllPages<T>(listPath, schema));
}

export const useRuns = () => useList<Run>(RUNS_PATH, runListSchema);
export const useFacilities = () => useList<Facility>(FACILITIES_PATH, facilityListSchema);
export const useEquipmentList = () => useList<Equipment>(EQUIPMENT_PATH, equipmentListSchema);
export const useInstruments = () => useList<Instrument>(INSTRUMENTS_PATH, instrumentListSchema);

/** Revalidates every cached request under the given API paths (lists, single objects and children). */
export function useRevalidate() {
  const { mutate } = useSWRConfig();
  // Called with the matcher alone, SWR revalidates the matching keys without touching their data.
  return useCallback((...prefixes: string[]) => mutate((key) => {
    const path = Array.isArray(key) ? key[0] : key;
    return typeof path === 'string' && prefixes.some((prefix) => path.startsWith(prefix));
  }), [mutate]);
}

export { nameLookup } from './name-lookup.ts';
