/**
 * The access matrix: every registered /api/v1 route is called without a token, as viewer, editor,
 * admin and superuser of one organisation, and as an admin of another organisation acting on the first
 * organisation's objects. The routes come from the authentication plugin's registry, so a route added
 * later is covered without touching this file; a new resource with an `:id` only needs one line in
 * OBJECT_FIXTURES (the test fails naming it otherwise).
 *
 * Role checks only assert the auth layer's outcome: 401/403 exactly when the caller lacks the declared
 * access, anything else (400 for the dummy input, 404 for the dummy id) otherwise.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { can } from '@bioprocess/shared/permissions';
import type { Role } from '@bioprocess/shared/enums';
import { createTestContext, type TestContext, type TestUser } from './support/test-context.ts';
import { listDeclaredRoutes, type DeclaredRoute } from '../src/auth/authenticate.ts';
import { hashToken, SESSION_TOKEN_PREFIX } from '../src/auth/principal.ts';

/** An id that exists nowhere: role checks must not touch real objects. */
const DUMMY_ID = '2147480000';

type ObjectIds = Record<string, string>;

/** Creates one object per resource in the given organisation; keys are the path before `/:id`. */
async function createObjectFixtures(ctx: TestContext, organizationId: number, member: TestUser): Promise<ObjectIds> {
  const one = async (sql: string, params: unknown[]) => String((await ctx.deps.pg.query(sql, params)).rows[0].id);
  const facility = await one(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Matrix lab', 'lab') RETURNING id`, [organizationId]);
  const equipment = await one(`INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, 'Matrix F1', 'fermenter') RETURNING id`, [organizationId, facility]);
  const instrument = await one(`INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, 'Matrix T', 'temperature') RETURNING id`, [organizationId, equipment]);
  const run = await one(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Matrix run', 'protein') RETURNING id`, [organizationId, facility]);
  const unitOperation = await one(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
     VALUES ($1, $2, 'fermentation', $3, now() - interval '2 hours', now() - interval '1 hour') RETURNING id`,
    [organizationId, run, equipment],
  );
  const comment = await one(`INSERT INTO comments (organization_id, unit_operations_id, author, timestamp, content) VALUES ($1, $2, $3, now(), 'Matrix') RETURNING id`, [organizationId, unitOperation, member.id]);
  const sample = await one(`INSERT INTO samples (organization_id, unit_operation_id, sample_id, drawn_at) VALUES ($1, $2, 'Matrix S1', now()) RETURNING id`, [organizationId, unitOperation]);
  const apiKey = await one(`INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, 'Matrix key', $2, 'bpk_x', 'viewer') RETURNING id`, [organizationId, randomBytes(16).toString('hex')]);
  const derivedParameter = await one(`INSERT INTO derived_parameters (organization_id, name, expression) VALUES ($1, 'Matrix formula', '[temperature] * 2') RETURNING id`, [organizationId]);
  const goldenBatch = await one(
    `INSERT INTO golden_batches (organization_id, name, unit_operation_type, reference_unit_operation_ids, parameters, alignment, band)
     VALUES ($1, 'Matrix golden batch', 'fermentation', ARRAY[$2::bigint], ARRAY['temperature'], '{"kind":"start"}', '{"kind":"sigma","k":2}') RETURNING id`,
    [organizationId, unitOperation],
  );
  const invitation = await one(
    `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at)
     VALUES ($1, 'matrix-invitee@example.test', 'viewer', 'matrix-invitation', now() + interval '1 day') RETURNING id`,
    [organizationId],
  );
  const alertRule = await one(
    `INSERT INTO alert_rules (organization_id, name, instrument_type, condition) VALUES ($1, 'Matrix alert', 'temperature', '{"kind":"threshold","direction":"above","value":40,"hold_seconds":0}') RETURNING id`,
    [organizationId],
  );
  const alertEvent = await one(
    `INSERT INTO alert_events (organization_id, rule_id, instrument_id, started_at, fired_at, message) VALUES ($1, $2, $3, now(), now(), 'Matrix firing') RETURNING id`,
    [organizationId, alertRule, instrument],
  );
  const session = await one(`INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 hour') RETURNING id`, [randomBytes(16).toString('hex'), member.id]);
  const catalogueType = await one(`INSERT INTO instrument_catalogue_types (organization_id, name) VALUES ($1, 'Matrix type') RETURNING id`, [organizationId]);
  const auditCheckpoint = await one(
    `INSERT INTO audit_checkpoints (chain_key, chain_seq, entry_hash, created_at, algorithm, public_key, key_fingerprint, signature)
     VALUES ($1, 1, repeat('0', 64), '2026-01-01T00:00:00.000Z', 'Ed25519', 'matrix', 'matrix', 'matrix') RETURNING id`,
    [organizationId],
  );
  const integrationConnection = await one(
    `INSERT INTO integration_connections (organization_id, name, kind, endpoint_url) VALUES ($1, 'Matrix broker', 'mqtt', 'mqtt://127.0.0.1:1') RETURNING id`,
    [organizationId],
  );
  const catalogueUnit = await one(`INSERT INTO instrument_catalogue_units (organization_id, code, label) VALUES ($1, 'mmol/h', 'Matrix unit') RETURNING id`, [organizationId]);
  // A finished job, so that a progress stream (if one were wrongly served) ends at once.
  const ingestJob = randomUUID();
  await ctx.deps.pg.query(
    `INSERT INTO ingest_jobs (id, organization_id, kind, state, version_seq, finished_at) VALUES ($1, $2, 'bulk', 'completed', 1, now())`,
    [ingestJob, organizationId],
  );
  // A failed export, so that its progress stream ends at once and its download has no file to serve.
  const exportJob = randomUUID();
  await ctx.deps.pg.query(
    `INSERT INTO export_jobs (id, organization_id, kind, state, requested_by, finished_at) VALUES ($1, $2, 'time_series', 'failed', 'matrix', now())`,
    [exportJob, organizationId],
  );
  return {
    '/api/v1/facilities': facility,
    '/api/v1/equipment': equipment,
    '/api/v1/instruments': instrument,
    '/api/v1/runs': run,
    '/api/v1/unit-operations': unitOperation,
    '/api/v1/comments': comment,
    '/api/v1/samples': sample,
    '/api/v1/api-keys': apiKey,
    '/api/v1/auth/users': String(member.id),
    '/api/v1/auth/invitations': invitation,
    '/api/v1/auth/sessions': session,
    '/api/v1/organizations': String(organizationId),
    '/api/v1/ingest-jobs': ingestJob,
    '/api/v1/export-jobs': exportJob,
    '/api/v1/derived-parameters': derivedParameter,
    '/api/v1/golden-batches': goldenBatch,
    '/api/v1/alert-rules': alertRule,
    '/api/v1/alert-events': alertEvent,
    '/api/v1/instrument-catalogue/types': catalogueType,
    '/api/v1/audit/checkpoints': auditCheckpoint,
    '/api/v1/instrument-catalogue/units': catalogueUnit,
    '/api/v1/integrations/connections': integrationConnection,
  };
}

function resourceOf(url: string): string | null {
  const index = url.indexOf('/:id');
  return index === -1 ? null : url.slice(0, index);
}

function withParams(url: string, idValue: string): string {
  return url.replace(/:id\b/, idValue).replace(/:[A-Za-z_]+/g, DUMMY_ID);
}

function permitted(route: DeclaredRoute, role: Role | null, superuser: boolean): boolean {
  if (route.access === 'public') return true;
  if (role === null) return false;
  if (route.access === 'authenticated') return true;
  return can({ roles: [role], superuser }, route.access);
}

describe('access matrix over every registered route', () => {
  let ctx: TestContext;
  let routes: DeclaredRoute[];
  let orgA: number;
  const members: Record<'viewer' | 'editor' | 'admin' | 'superuser', TestUser> = {} as never;
  let outsider: TestUser;
  let fixtures: ObjectIds;

  beforeAll(async () => {
    ctx = await createTestContext();
    routes = listDeclaredRoutes(ctx.app).filter((route) => route.method !== 'HEAD' && route.method !== 'OPTIONS');
    orgA = await ctx.createOrganization('Matrix A');
    const orgB = await ctx.createOrganization('Matrix B');
    members.viewer = await ctx.createUser({ organizationId: orgA, role: 'viewer' });
    members.editor = await ctx.createUser({ organizationId: orgA, role: 'editor' });
    members.admin = await ctx.createUser({ organizationId: orgA, role: 'admin' });
    members.superuser = await ctx.createUser({ organizationId: orgA, role: 'admin', superuser: true });
    outsider = await ctx.createUser({ organizationId: orgB, role: 'admin' });
    fixtures = await createObjectFixtures(ctx, orgA, members.viewer);
  });
  afterAll(async () => { await ctx.close(); });

  /** A fresh session per call, so that logout (or anything revoking sessions) cannot affect later calls. */
  async function freshToken(user: TestUser): Promise<string> {
    const token = `${SESSION_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    await ctx.deps.pg.query(`INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [hashToken(token), user.id]);
    return token;
  }

  async function call(route: DeclaredRoute, url: string, user: TestUser | null): Promise<LightMyRequestResponse> {
    const token = user ? await freshToken(user) : undefined;
    const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
    return ctx.request({ method: route.method as 'GET', url, token, ...(hasBody ? { payload: {} } : {}) });
  }

  it('finds the routes of every feature', () => {
    const urls = new Set(routes.map((route) => `${route.method} ${route.url}`));
    for (const expected of ['POST /api/v1/auth/login', 'GET /api/v1/auth/users', 'DELETE /api/v1/organizations/:id', 'GET /api/v1/audit/logs/export', 'POST /api/v1/api-keys']) {
      expect(urls.has(expected), expected).toBe(true);
    }
  });

  it('has an object fixture for every resource addressed by id', () => {
    const missing = [...new Set(routes.map((route) => resourceOf(route.url)).filter((resource): resource is string => resource !== null && !(resource in fixtures)))];
    expect(missing, 'add these resources to createObjectFixtures').toEqual([]);
  });

  const callers: Array<{ label: string; role: Role | null; superuser: boolean; user: () => TestUser | null }> = [
    { label: 'no token', role: null, superuser: false, user: () => null },
    { label: 'viewer', role: 'viewer', superuser: false, user: () => members.viewer },
    { label: 'editor', role: 'editor', superuser: false, user: () => members.editor },
    { label: 'admin', role: 'admin', superuser: false, user: () => members.admin },
    { label: 'superuser', role: 'admin', superuser: true, user: () => members.superuser },
  ];

  for (const caller of callers) {
    it(`answers 401/403 exactly when the ${caller.label} lacks the declared access`, async () => {
      const mismatches: string[] = [];
      for (const route of routes) {
        const response = await call(route, withParams(route.url, DUMMY_ID), caller.user());
        const allowed = permitted(route, caller.role, caller.superuser);
        const expectedDenial = caller.role === null ? 401 : 403;
        const denied = response.statusCode === 401 || response.statusCode === 403;
        if (allowed ? denied : response.statusCode !== expectedDenial) {
          mismatches.push(`${route.method} ${route.url} [${route.access}] -> ${response.statusCode} ${response.body.slice(0, 120)}`);
        }
      }
      expect(mismatches).toEqual([]);
    });
  }

  it('answers 404 (never success) to a user of another organisation acting on this organisation\'s objects', async () => {
    const byId = routes.filter((route) => resourceOf(route.url) !== null);
    expect(byId.length).toBeGreaterThan(0);
    // Deletions last, so that a wrongly allowed deletion cannot hide behind a later 404.
    const ordered = [...byId.filter((route) => route.method !== 'DELETE'), ...byId.filter((route) => route.method === 'DELETE')];
    const mismatches: string[] = [];
    for (const route of ordered) {
      const url = withParams(route.url, fixtures[resourceOf(route.url)!]!);
      const response = await call(route, url, outsider);
      const allowed = permitted(route, 'admin', false);
      const status = response.statusCode;
      let ok: boolean;
      if (!allowed) ok = status === 403;
      else if (route.method === 'GET' || route.method === 'DELETE') ok = status === 404;
      else ok = status === 404 || status === 400; // the dummy body may fail validation first
      if (!ok) mismatches.push(`${route.method} ${url} [${route.access}] -> ${status} ${response.body.slice(0, 120)}`);
    }
    expect(mismatches).toEqual([]);

    // Nothing of the first organisation was changed.
    for (const [table, id] of [['facilities', fixtures['/api/v1/facilities']], ['runs', fixtures['/api/v1/runs']], ['comments', fixtures['/api/v1/comments']], ['users', fixtures['/api/v1/auth/users']]] as const) {
      const { rowCount } = await ctx.deps.pg.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id]);
      expect(rowCount, table).toBe(1);
    }
    const key = await ctx.deps.pg.query('SELECT revoked_at FROM api_keys WHERE id = $1', [fixtures['/api/v1/api-keys']]);
    expect(key.rows[0].revoked_at).toBeNull();
  });
});
