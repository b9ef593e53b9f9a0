/**
 * Names for the resources of audit events, so the audit list reads "instrument 'pH probe'" rather
 * than an id. The event's own record comes first (a deleted resource keeps the name it had); else the
 * resource as it is now, looked up in one query per type.
 */
import type { Pool } from '@bioprocess/shared/server/postgres';
import { instrumentNames } from '@bioprocess/shared/server/instruments-repository';
import { unitOperationNames } from '@bioprocess/shared/server/unit-operations-repository';

/** The names of some rows of one type: ids, and the organisation they must belong to (null: any). */
type NameLookup = (pool: Pool, ids: number[], organizationId: number | null) => Promise<Array<{ id: number; name: string }>>;

const byQuery = (text: string): NameLookup => async (pool, ids, organizationId) =>
  (await pool.query<{ id: number; name: string }>(text, [ids, organizationId])).rows;

/** How each resource type is named from its current row. */
const NAME_LOOKUPS: Record<string, NameLookup> = {
  instrument: instrumentNames,
  equipment: byQuery('SELECT id, name FROM equipment WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  facility: byQuery('SELECT id, name FROM facilities WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  run: byQuery('SELECT id, name FROM runs WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  unit_operation: unitOperationNames,
  user: byQuery('SELECT id, email AS name FROM users WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  api_key: byQuery('SELECT id, name FROM api_keys WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  golden_batch: byQuery('SELECT id, name FROM golden_batches WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  sample: byQuery('SELECT id, sample_id AS name FROM samples WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)'),
  organization: byQuery('SELECT id, name FROM organizations WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR id = $2)'),
};

interface AuditRowForName {
  resource_type: string | null;
  resource_id: string | null;
  changes: unknown;
}

/** The name an event recorded itself: its row's `name` (or email), or the unit operation it names. */
function recordedName(row: AuditRowForName): string | null {
  const changes = row.changes as { before?: Record<string, unknown> | null; after?: Record<string, unknown> | null } | null;
  for (const side of [changes?.after, changes?.before]) {
    if (!side || typeof side !== 'object') continue;
    if (typeof side.unit_operation === 'string') return side.unit_operation;
    if (typeof side.name === 'string' && side.name) return side.name;
    if (row.resource_type === 'user' && typeof side.email === 'string') return side.email;
    if (row.resource_type === 'sample' && typeof side.sample_id === 'string') return side.sample_id;
  }
  return null;
}

/**
 * The names of the rows' resources, in the rows' order (null when unknown). `organizationId` limits
 * lookups to one organisation (null: a superuser's view of all).
 */
export async function resourceNames(pool: Pool, rows: readonly AuditRowForName[], organizationId: number | null): Promise<Array<string | null>> {
  const names: Array<string | null> = rows.map(recordedName);
  const wanted = new Map<string, Set<number>>();
  rows.forEach((row, index) => {
    if (names[index] !== null || !row.resource_type || !row.resource_id || !NAME_LOOKUPS[row.resource_type]) return;
    const id = Number(row.resource_id);
    if (!Number.isSafeInteger(id)) return;
    if (!wanted.has(row.resource_type)) wanted.set(row.resource_type, new Set());
    wanted.get(row.resource_type)!.add(id);
  });
  const found = new Map<string, string>();
  await Promise.all([...wanted].map(async ([type, ids]) => {
    const named = await NAME_LOOKUPS[type]!(pool, [...ids], organizationId);
    for (const row of named) found.set(`${type}:${row.id}`, row.name);
  }));
  return rows.map((row, index) => names[index] ?? found.get(`${row.resource_type}:${row.resource_id}`) ?? null);
}
