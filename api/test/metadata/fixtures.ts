/**
 * Builders of the metadata tests that go through the API itself (the organisation and its users come
 * from ../support/fixtures.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestContext } from '../support/test-context.ts';

type Json = Record<string, unknown>;

export async function post(ctx: TestContext, token: string, url: string, payload: Json): Promise<Json & { id: number }> {
  const response = await ctx.request({ method: 'POST', url, token, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

export function createFacility(ctx: TestContext, token: string, fields: Json = {}) {
  return post(ctx, token, '/api/v1/facilities', { name: 'Pilot hall', type: 'pilot plant', ...fields });
}

export function createEquipment(ctx: TestContext, token: string, facilityId: number, fields: Json = {}) {
  return post(ctx, token, '/api/v1/equipment', { name: 'BR-01', type: 'Stirred-tank bioreactor', facility_id: facilityId, ...fields });
}

export function createInstrument(ctx: TestContext, token: string, equipmentId: number, fields: Json = {}) {
  return post(ctx, token, '/api/v1/instruments', {
    name: `probe-${randomBytes(3).toString('hex')}`, type: 'temperature', unit: 'celsius', equipment_id: equipmentId, ...fields,
  });
}

export function createRun(ctx: TestContext, token: string, facilityId: number, fields: Json = {}) {
  return post(ctx, token, '/api/v1/runs', { facility_id: facilityId, name: 'Run A', target: 'Lysozyme', ...fields });
}

export function createUnitOperation(ctx: TestContext, token: string, runId: number, equipmentId: number, fields: Json = {}) {
  return post(ctx, token, '/api/v1/unit-operations', { run_id: runId, type: 'fermentation', equipment_id: equipmentId, ...fields });
}

export function createComment(ctx: TestContext, token: string, unitOperationId: number, fields: Json = {}) {
  return post(ctx, token, '/api/v1/comments', {
    unit_operations_id: unitOperationId, timestamp: '2024-03-01T10:30:00.000Z', content: 'Feed started', ...fields,
  });
}

/** Facility -> equipment -> run -> unit operation, for tests that need the whole chain. */
export async function createProcessChain(ctx: TestContext, token: string) {
  const facility = await createFacility(ctx, token);
  const equipment = await createEquipment(ctx, token, facility.id);
  const run = await createRun(ctx, token, facility.id);
  const unitOperation = await createUnitOperation(ctx, token, run.id, equipment.id);
  return { facility, equipment, run, unitOperation };
}

/**
 * Audit events recorded with their changes, in the order of the changes (no audit-worker runs in these
 * tests, so every event stays in the outbox).
 */
export async function pendingAuditEvents(ctx: TestContext): Promise<Json[]> {
  const { rows } = await ctx.deps.pg.query('SELECT event FROM audit_outbox ORDER BY id');
  return rows.map((row) => row.event as Json);
}
