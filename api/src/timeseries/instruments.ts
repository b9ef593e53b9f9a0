/**
 * What the time-series routes ask of instruments and unit operations: which instruments a request
 * may read or write (asked by many feeds at once), and the instruments and window of a unit
 * operation. The queries are the tables' repositories'.
 */
import { GroupCommit } from '@bioprocess/shared/group-commit';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { ChangeNotifiedCache } from '../platform/access-caches.ts';
import { requireEquipment } from '../equipment/repository.ts';
import { instrumentOrganizations, listInstrumentIds, listInstrumentIdsOnEquipment } from '@bioprocess/shared/server/instruments-repository';
import type { UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { requireUnitOperation } from '../unit-operations/repository.ts';

const ownedOf = (owners: Map<number, number>, organizationId: number, ids: readonly number[]) =>
  new Set(ids.filter((id) => owners.get(id) === organizationId));

/** The subset of `ids` that are instruments of the organisation. */
export async function ownedInstrumentIds(pool: Pool, organizationId: number, ids: Iterable<number>): Promise<Set<number>> {
  const wanted = [...ids];
  return ownedOf(await instrumentOrganizations(pool, wanted), organizationId, wanted);
}

export interface OwnershipLookups {
  /** ownedInstrumentIds, asked together with the requests asking meanwhile. */
  owned(organizationId: number, ids: Iterable<number>): Promise<Set<number>>;
}

/** Instrument ids per statement at most. */
const MAX_LOOKUP_IDS = 20_000;

/**
 * Which instruments belong to whom. Feeds post to the same instruments many times a second: an
 * instrument's organisation, once found, is served from memory while no deletion or move of it is
 * heard (platform/access-caches.ts). The others are looked up for many requests in one statement.
 * An instrument not found is looked up every time: it may be created the next moment.
 */
export function createOwnershipLookups(pool: Pool, cache: ChangeNotifiedCache<number, number>): OwnershipLookups {
  const lookups = new GroupCommit<{ organizationId: number; ids: number[] }, Set<number>>({
    flush: async (asks) => {
      const stamp = cache.stamp();
      const owners = await instrumentOrganizations(pool, asks.flatMap((ask) => ask.ids));
      for (const [id, organizationId] of owners) cache.set(id, organizationId, stamp);
      return asks.map(({ organizationId, ids }) => ownedOf(owners, organizationId, ids));
    },
    weigh: (ask) => ask.ids.length,
    maxWeight: MAX_LOOKUP_IDS,
  });
  return {
    owned: async (organizationId, ids) => {
      const unique = [...new Set(ids)];
      const owners = new Map<number, number>();
      for (const id of unique) {
        const owner = cache.get(id);
        if (owner === undefined) return lookups.submit({ organizationId, ids: unique });
        owners.set(id, owner);
      }
      return ownedOf(owners, organizationId, unique);
    },
  };
}

/** Every instrument id of the organisation. */
export const organizationInstrumentIds = listInstrumentIds;

/** The instrument ids of one piece of the organisation's equipment (404 when it is not the organisation's). */
export async function instrumentsOfEquipment(pool: Pool, organizationId: number, equipmentId: number): Promise<number[]> {
  await requireEquipment(pool, organizationId, equipmentId);
  return listInstrumentIdsOnEquipment(pool, organizationId, equipmentId);
}

export interface UnitOperationWindow {
  id: number;
  equipmentId: number | null;
  startMs: number | null;
  endMs: number | null;
}

export const unitOperationWindow = (row: Pick<UnitOperationRow, 'id' | 'equipment_id' | 'start_time' | 'end_time'>): UnitOperationWindow =>
  ({ id: row.id, equipmentId: row.equipment_id, startMs: row.start_time?.getTime() ?? null, endMs: row.end_time?.getTime() ?? null });

/** The organisation's unit operation as its readings are chosen: its equipment and window (404 when it has none such). */
export async function findUnitOperation(pool: Pool, organizationId: number, unitOperationId: number): Promise<UnitOperationWindow> {
  return unitOperationWindow(await requireUnitOperation(pool, organizationId, unitOperationId));
}
