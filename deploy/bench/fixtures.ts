/** Bench fixtures: private databases, an organisation with an editor session and instruments. */
import { createHash, randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';

export interface BenchPlant {
  organizationId: number;
  token: string;
  equipmentId: number;
  instrumentIds: number[];
  unitOperationId: number;
}

export async function seedPlant(pool: Pool, instruments: number): Promise<BenchPlant> {
  const org = await pool.query(`INSERT INTO organizations (name) VALUES ('Bench') RETURNING id`);
  const organizationId = org.rows[0].id as number;
  const user = await pool.query(
    `INSERT INTO users (email, name, organization_id, role) VALUES ($1, 'Bench', $2, 'editor') RETURNING id`,
    [`bench-${randomBytes(4).toString('hex')}@example.test`, organizationId]);
  const token = `bps_${randomBytes(32).toString('base64url')}`;
  await pool.query(`INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 day')`,
    [createHash('sha256').update(token).digest('hex'), user.rows[0].id]);
  const facility = await pool.query(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Bench hall', 'lab') RETURNING id`, [organizationId]);
  const equipment = await pool.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, 'Bench reactor', 'bioreactor') RETURNING id`,
    [organizationId, facility.rows[0].id]);
  const equipmentId = equipment.rows[0].id as number;
  const instrumentIds: number[] = [];
  for (let index = 0; index < instruments; index += 1) {
    const { rows } = await pool.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, $3, 'temperature') RETURNING id`,
      [organizationId, equipmentId, `Probe ${index}`]);
    instrumentIds.push(rows[0].id as number);
  }
  const run = await pool.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Bench run', 'titer') RETURNING id`,
    [organizationId, facility.rows[0].id]);
  // A window holding every bench file (they start at 2024-01-01): both uploads go into it as they are,
  // where a unit operation without one would take the first file's range and skip the rest of the second.
  const unitOperation = await pool.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
     VALUES ($1, $2, 'fermentation', $3, '2024-01-01T00:00:00Z', '2100-01-01T00:00:00Z') RETURNING id`,
    [organizationId, run.rows[0].id, equipmentId]);
  return { organizationId, token, equipmentId, instrumentIds, unitOperationId: unitOperation.rows[0].id as number };
}

/**
 * Waits until no completed bulk post owes its rollups any more (rollup_backlog is empty): posts are
 * answered once their points are stored, and their rollups follow. A product figure "until queryable"
 * stops its clock here, so it counts the rollups that reads of long ranges wait for.
 */
export async function rollupsStored(pool: Pool): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await pool.query<{ owed: boolean }>('SELECT EXISTS (SELECT 1 FROM rollup_backlog) AS owed');
    if (!rows[0]!.owed) return;
    if (Date.now() > deadline) throw new Error('rollups still owed two minutes after the last answer');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Lets ClickHouse finish background merges of earlier steps, so a step is timed on a settled table.
 * Settled means no merge for two seconds on end: after a step of many small inserts (the fan-in's ten
 * thousand parts), merges come in waves, and one look between two of them would start the next step
 * beside the rest (a CSV upload timed so ran at 0.51 of the baseline, and at 0.94 alone).
 */
export async function waitForMerges(clickhouse: ClickHouseClient, database?: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    const result = await clickhouse.query({ query: `SELECT count() FROM system.merges${database === undefined ? '' : ` WHERE database = '${database}'`}`, format: 'JSONCompact' });
    const [row] = (await result.json<[string]>()).data;
    if (Number(row?.[0] ?? 0) > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= 2_000) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
