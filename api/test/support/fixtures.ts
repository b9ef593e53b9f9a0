/**
 * The set-up most test files share: an organisation with one user per role, organisation API keys,
 * and a plant (facility, equipment, instruments and unit operations inserted directly, for tests
 * about what happens to readings rather than about the metadata endpoints).
 */
import { randomBytes } from 'node:crypto';
import type { Role } from '@bioprocess/shared/enums';
import type { TestContext, TestUser } from './test-context.ts';
import { API_KEY_PREFIX, hashToken } from '../../src/auth/principal.ts';

export interface Organisation {
  id: number;
  admin: TestUser;
  editor: TestUser;
  viewer: TestUser;
}

export async function createOrganisationWithUsers(ctx: TestContext): Promise<Organisation> {
  const id = await ctx.createOrganization();
  const [admin, editor, viewer] = await Promise.all([
    ctx.createUser({ organizationId: id, role: 'admin' }),
    ctx.createUser({ organizationId: id, role: 'editor' }),
    ctx.createUser({ organizationId: id, role: 'viewer' }),
  ]);
  return { id, admin, editor, viewer };
}

/** An organisation API key (no user behind it), inserted as the api-keys feature stores them. */
export async function createApiKey(ctx: TestContext, organizationId: number, role: Role): Promise<string> {
  const token = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  await ctx.deps.pg.query(
    'INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, $2, $3, $4, $5)',
    [organizationId, 'test key', hashToken(token), token.slice(0, 12), role],
  );
  return token;
}

export interface Plant {
  organizationId: number;
  editor: TestUser;
  viewer: TestUser;
  equipmentId: number;
  instrumentIds: number[];
}

export async function createPlant(ctx: TestContext, instrumentCount = 3): Promise<Plant> {
  const organizationId = await ctx.createOrganization();
  const editor = await ctx.createUser({ organizationId, role: 'editor' });
  const viewer = await ctx.createUser({ organizationId, role: 'viewer' });
  const facility = await ctx.deps.pg.query(
    `INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Pilot hall', 'pilot plant') RETURNING id`, [organizationId]);
  const equipment = await ctx.deps.pg.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
    [organizationId, facility.rows[0].id, `Reactor ${randomBytes(2).toString('hex')}`]);
  const equipmentId = equipment.rows[0].id as number;
  const instrumentIds = await addInstruments(ctx, organizationId, equipmentId, instrumentCount);
  return { organizationId, editor, viewer, equipmentId, instrumentIds };
}

export async function addInstruments(ctx: TestContext, organizationId: number, equipmentId: number, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const { rows } = await ctx.deps.pg.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type, unit) VALUES ($1, $2, $3, 'temperature', 'celsius') RETURNING id`,
      [organizationId, equipmentId, `Sensor ${randomBytes(3).toString('hex')}`]);
    ids.push(rows[0].id as number);
  }
  return ids;
}

export async function createUnitOperation(ctx: TestContext, plant: Plant, window: { start?: string | null; end?: string | null } = {}): Promise<number> {
  const run = await ctx.deps.pg.query(
    `INSERT INTO runs (organization_id, facility_id, name, target)
     SELECT $1, f.id, 'Run', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`, [plant.organizationId]);
  const { rows } = await ctx.deps.pg.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
     VALUES ($1, $2, 'fermentation', $3, $4, $5) RETURNING id`,
    [plant.organizationId, run.rows[0].id, plant.equipmentId, window.start ?? null, window.end ?? null]);
  return rows[0].id as number;
}
