/** Instrument ownership and lookups in PostgreSQL, always scoped by organisation. */
import { GroupCommit } from '@bioprocess/shared/group-commit';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { notFound } from '../platform/http-error.ts';
import type { ChangeNotifiedCache } from '../platform/access-caches.ts';

/** The organisation of each of `ids` that is an instrument (one query for any number of ids). */
async function instrumentOwners(pool: Pool, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  // Named: prepared once per connection (feeds run it many times a second).
  const { rows } = await pool.query<{ id: number; organization_id: number }>({
    name: 'instrument-owners', text: 'SELECT id, organization_id FROM instruments WHERE id = ANY($1::bigint[])', values: [[...new Set(ids)]],
  });
  return new Map(rows.map((row) => [row.id, row.organization_id]));
}

const ownedOf = (owners: Map<number, number>, organizationId: number, ids: readonly number[]) =>
  new Set(ids.filter((id) => owners.get(id) === organizationId));

/** The subset of `ids` that are instruments of the organisation. */
export async function ownedInstrumentIds(pool: Pool, organizationId: number, ids: Iterable<number>): Promise<Set<number>> {
  const wanted = [...ids];
  return ownedOf(await instrumentOwners(pool, wanted), organizationId, wanted);
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
      const owners = await instrumentOwners(pool, asks.flatMap((ask) => ask.ids));
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
        if (owner === undefined) return (await lookups.submit({ organizationId, ids: unique })).result;
        owners.set(id, owner);
      }
      return ownedOf(owners, organizationId, unique);
    },
  };
}

/** Every instrument id of the organisation. */
export async function organizationInstrumentIds(pool: Pool, organizationId: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM instruments WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

export async function instrumentsOfEquipment(pool: Pool, organizationId: number, equipmentId: number): Promise<number[]> {
  const equipment = await pool.query('SELECT 1 FROM equipment WHERE id = $1 AND organization_id = $2', [equipmentId, organizationId]);
  if (!equipment.rowCount) throw notFound('Equipment not found');
  const { rows } = await pool.query<{ id: number }>(
    'SELECT id FROM instruments WHERE organization_id = $1 AND equipment_id = $2 ORDER BY id',
    [organizationId, equipmentId],
  );
  return rows.map((row) => row.id);
}

export interface UnitOperationWindow {
  id: number;
  equipmentId: number | null;
  startMs: number | null;
  endMs: number | null;
}

export async function findUnitOperation(pool: Pool, organizationId: number, unitOperationId: number): Promise<UnitOperationWindow> {
  const { rows } = await pool.query(
    'SELECT id, equipment_id, start_time, end_time FROM unit_operations WHERE id = $1 AND organization_id = $2',
    [unitOperationId, organizationId],
  );
  const row = rows[0];
  if (!row) throw notFound('Unit operation not found');
  return {
    id: row.id,
    equipmentId: row.equipment_id,
    startMs: row.start_time ? (row.start_time as Date).getTime() : null,
    endMs: row.end_time ? (row.end_time as Date).getTime() : null,
  };
}
