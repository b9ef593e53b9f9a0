/**
 * Integration connections and mappings through the real HTTP server: who may write, what is stored
 * (secrets only as ciphertext, never answered), validation answers, all-or-nothing bulk mappings,
 * organisation isolation, the connection's own API key, and the status read from Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret, generateSecretKey, parseSecretKey, secretContext } from '@bioprocess/shared/server/integration-secrets';
import { integrationKeys } from '@bioprocess/shared/server/integration-protocol';
import { createTestContext, type TestContext, type TestUser } from './support/test-context.ts';

const KEY = generateSecretKey();
const BASE = '/api/v1/integrations/connections';

describe('integration connections and mappings', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let unitOperationId: number;
  let instrumentId: number;

  beforeAll(async () => {
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY });
    const org = await ctx.createOrganization('Integrations org');
    admin = await ctx.createUser({ organizationId: org, role: 'admin' });
    editor = await ctx.createUser({ organizationId: org, role: 'editor' });
    viewer = await ctx.createUser({ organizationId: org, role: 'viewer' });
    outsider = await ctx.createUser({ organizationId: await ctx.createOrganization('Other org'), role: 'admin' });
    const one = async (sql: string, params: unknown[]) => Number((await ctx.deps.pg.query(sql, params)).rows[0].id);
    const facility = await one(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Lab', 'lab') RETURNING id`, [org]);
    const equipment = await one(`INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, 'F1', 'fermenter') RETURNING id`, [org, facility]);
    instrumentId = await one(`INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, 'T', 'temperature') RETURNING id`, [org, equipment]);
    const run = await one(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Run', 'protein') RETURNING id`, [org, facility]);
    unitOperationId = await one(`INSERT INTO unit_operations (organization_id, run_id, type, equipment_id) VALUES ($1, $2, 'fermentation', $3) RETURNING id`, [org, run, equipment]);
  });
  afterAll(async () => { await ctx.close(); });

  const create = (user: TestUser, payload: object) => ctx.request({ method: 'POST', url: BASE, token: user.token, payload });

  it('stores the secret encrypted, never answers it, and gives the connection an API key of its own', async () => {
    const response = await create(admin, {
      kind: 'mqtt', name: 'Broker', endpoint_url: 'mqtts://broker.example:8883', secret: 'hunter2-secret',
      settings: { client_id: 'bioprocess-1', username: 'plant', tls: { reject_unauthorized: true } },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.body).not.toContain('hunter2');
    const connection = response.json();
    expect(connection).toMatchObject({ kind: 'mqtt', name: 'Broker', has_secret: true, enabled: true, settings: { client_id: 'bioprocess-1', username: 'plant' } });

    const { rows } = await ctx.deps.pg.query('SELECT secret_ciphertext, api_key_ciphertext, api_key_id FROM integration_connections WHERE id = $1', [connection.id]);
    expect(rows[0].secret_ciphertext.toString('latin1')).not.toContain('hunter2');
    const key = parseSecretKey(KEY);
    expect(decryptSecret(key, rows[0].secret_ciphertext, secretContext.source(connection.id))).toBe('hunter2-secret');
    // Bound to its row and purpose: the same bytes do not decrypt as another connection's secret.
    expect(() => decryptSecret(key, rows[0].secret_ciphertext, secretContext.source(connection.id + 1))).toThrow(/does not decrypt/);
    const apiKey = decryptSecret(key, rows[0].api_key_ciphertext, secretContext.apiKey(connection.id));
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: apiKey, payload: { data: [{ instrument_id: instrumentId, ts: 1_700_000_000_000, value: 1 }] } });
    expect(posted.statusCode, posted.body).toBe(202);

    const listed = await ctx.request({ method: 'GET', url: BASE, token: viewer.token });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain('hunter2');
    expect(listed.json().map((item: { id: number }) => item.id)).toContain(connection.id);

    // Removing the secret, then deleting the connection revokes its key.
    const cleared = await ctx.request({ method: 'PATCH', url: `${BASE}/${connection.id}`, token: admin.token, payload: { secret: null } });
    expect(cleared.json()).toMatchObject({ has_secret: false });
    const deleted = await ctx.request({ method: 'DELETE', url: `${BASE}/${connection.id}`, token: admin.token });
    expect(deleted.statusCode).toBe(204);
    const refused = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: apiKey, payload: { data: [{ instrument_id: instrumentId, ts: 1_700_000_000_000, value: 1 }] } });
    expect(refused.statusCode).toBe(401);
    const revoked = await ctx.deps.pg.query('SELECT revoked_at FROM api_keys WHERE id = $1', [rows[0].api_key_id]);
    expect(revoked.rows[0].revoked_at).not.toBeNull();
  });

  it('lets only admins write, and answers bad input with a 400 naming it', async () => {
    expect((await create(editor, { kind: 'mqtt', name: 'E', endpoint_url: 'mqtt://x' })).statusCode).toBe(403);
    expect((await create(viewer, { kind: 'mqtt', name: 'V', endpoint_url: 'mqtt://x' })).statusCode).toBe(403);
    const cases: Array<[object, RegExp]> = [
      [{ kind: 'mqtt', name: 'A', endpoint_url: 'opc.tcp://x:4840' }, /endpoint_url: Endpoint URL must start with mqtt:\/\//],
      [{ kind: 'opcua', name: 'A', endpoint_url: 'mqtt://x' }, /opc\.tcp:\/\//],
      [{ kind: 'kafka', name: 'A', endpoint_url: 'mqtt://x' }, /Kind must be one of: mqtt, opcua/],
      [{ kind: 'mqtt', name: '', endpoint_url: 'mqtt://x' }, /name: Name is required/],
      [{ kind: 'mqtt', name: 'A', endpoint_url: 'mqtt://user:pw@x' }, /must not carry a user or password/],
      [{ kind: 'opcua', name: 'A', endpoint_url: 'opc.tcp://x:4840', settings: { security_mode: 'Weird' } }, /Security mode must be one of/],
      [{ kind: 'mqtt', name: 'A', endpoint_url: 'mqtt://x', buffer_limit_bytes: 10 }, /Buffer limit must be at least/],
    ];
    for (const [payload, message] of cases) {
      const response = await create(admin, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().error).toMatch(message);
    }
    const first = await create(admin, { kind: 'opcua', name: 'Plant', endpoint_url: 'opc.tcp://plant:4840' });
    expect(first.statusCode).toBe(201);
    const again = await create(admin, { kind: 'opcua', name: 'PLANT', endpoint_url: 'opc.tcp://plant:4840' });
    expect(again.statusCode).toBe(409);
    const kindChange = await ctx.request({ method: 'PATCH', url: `${BASE}/${first.json().id}`, token: admin.token, payload: { kind: 'mqtt' } });
    expect(kindChange.statusCode).toBe(400);
    const badSettings = await ctx.request({ method: 'PATCH', url: `${BASE}/${first.json().id}`, token: admin.token, payload: { settings: { security_mode: 'Sign', security_policy: 'Nope' } } });
    expect(badSettings.statusCode).toBe(400);
    expect(badSettings.json().error).toMatch(/settings\.security_policy: Security policy must be one of/);
  });

  it('adds mappings one at a time or all or nothing, creating instruments on request, within the organisation', async () => {
    const connection = (await create(admin, { kind: 'mqtt', name: 'Mapped', endpoint_url: 'mqtt://127.0.0.1:1883' })).json();
    const url = `${BASE}/${connection.id}/mappings`;
    const single = await ctx.request({ method: 'POST', url, token: admin.token, payload: { source: 'plant/r1/temp', payload_format: 'number', instrument_id: instrumentId, unit: 'Cel' } });
    expect(single.statusCode, single.body).toBe(201);
    expect(single.json()).toMatchObject({ source: 'plant/r1/temp', payload_format: 'number', instrument_id: instrumentId, bad_quality: 'missing', unit: 'Cel' });
    const duplicate = await ctx.request({ method: 'POST', url, token: admin.token, payload: { source: 'plant/r1/temp', payload_format: 'number', instrument_id: instrumentId } });
    expect(duplicate.statusCode).toBe(409);
    const noFormat = await ctx.request({ method: 'POST', url, token: admin.token, payload: { source: 'plant/r1/ph', instrument_id: instrumentId } });
    expect(noFormat.statusCode).toBe(400);
    expect(noFormat.json().error).toMatch(/needs payload_format/);

    const before = Number((await ctx.deps.pg.query('SELECT count(*) AS n FROM instruments')).rows[0].n);
    const bad = await ctx.request({
      method: 'POST', url: `${url}/bulk`, token: admin.token,
      payload: { mappings: [
        { source: 'spBv1.0/plant/DDATA/r1/ctl', payload_format: 'sparkplug', value_path: 'pH', instrument: { unit_operation_id: unitOperationId, name: 'pH (R1)', unit: '[pH]' } },
        { source: 'spBv1.0/plant/DDATA/r1/ctl', payload_format: 'json', instrument_id: instrumentId },
      ] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^mappings\.1: A JSON mapping needs value_path/);
    expect(Number((await ctx.deps.pg.query('SELECT count(*) AS n FROM instruments')).rows[0].n)).toBe(before);

    const good = await ctx.request({
      method: 'POST', url: `${url}/bulk`, token: admin.token,
      payload: { mappings: [
        { source: 'spBv1.0/plant/DDATA/r1/ctl', payload_format: 'sparkplug', value_path: 'pH', instrument: { unit_operation_id: unitOperationId, name: 'pH (R1)', unit: '[pH]' } },
        { source: 'spBv1.0/plant/DDATA/r1/ctl', payload_format: 'sparkplug', value_path: 'DO', bad_quality: 'drop', instrument: { unit_operation_id: unitOperationId, name: 'DO (R1)', unit: '%', type: 'dissolved_o2' } },
      ] },
    });
    expect(good.statusCode, good.body).toBe(201);
    const created = good.json();
    expect(created).toHaveLength(2);
    const instruments = await ctx.deps.pg.query('SELECT name, type, unit FROM instruments WHERE id = ANY($1::bigint[]) ORDER BY id', [created.map((m: { instrument_id: number }) => m.instrument_id)]);
    expect(instruments.rows).toEqual([{ name: 'pH (R1)', type: 'other', unit: '[pH]' }, { name: 'DO (R1)', type: 'dissolved_o2', unit: '%' }]);

    const patched = await ctx.request({ method: 'PATCH', url: `${url}/${created[0].id}`, token: admin.token, payload: { value_path: 'pH_value', bad_quality: 'drop' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ value_path: 'pH_value', bad_quality: 'drop' });
    const listed = await ctx.request({ method: 'GET', url, token: viewer.token });
    expect(listed.json()).toHaveLength(3);

    // Another organisation sees neither the connection nor its mappings, and cannot map its instruments.
    expect((await ctx.request({ method: 'GET', url, token: outsider.token })).statusCode).toBe(404);
    expect((await ctx.request({ method: 'GET', url: `${BASE}/${connection.id}`, token: outsider.token })).statusCode).toBe(404);
    const foreign = (await create(outsider, { kind: 'mqtt', name: 'Theirs', endpoint_url: 'mqtt://x' })).json();
    const stolen = await ctx.request({ method: 'POST', url: `${BASE}/${foreign.id}/mappings`, token: outsider.token, payload: { source: 'a', payload_format: 'number', instrument_id: instrumentId } });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().error).toBe('Instrument not found');

    const removed = await ctx.request({ method: 'DELETE', url: `${url}/${created[1].id}`, token: admin.token });
    expect(removed.statusCode).toBe(204);
    expect((await ctx.request({ method: 'GET', url, token: viewer.token })).json()).toHaveLength(2);
  });

  it("answers the status its connector published, and 'disconnected' or 'disabled' when none did", async () => {
    const connection = (await create(admin, { kind: 'mqtt', name: 'Status', endpoint_url: 'mqtt://127.0.0.1:1883', buffer_limit_bytes: 5 * 1024 * 1024 })).json();
    const statusUrl = `${BASE}/${connection.id}/status`;
    const idle = await ctx.request({ method: 'GET', url: statusUrl, token: viewer.token });
    expect(idle.json()).toEqual({ state: 'disconnected', last_message_at: null, messages_per_minute: 0, points_per_minute: 0, errors: [], buffered_bytes: 0, buffer_limit_bytes: 5 * 1024 * 1024 });
    await ctx.deps.redis.set(integrationKeys.status(ctx.env.QUEUE_PREFIX, connection.id), JSON.stringify({
      state: 'connected', last_message_at: '2026-01-01T00:00:00.000Z', messages_per_minute: 60, points_per_minute: 600,
      errors: [{ at: '2026-01-01T00:00:00.000Z', message: 'one bad payload' }], buffered_bytes: 1234, buffer_limit_bytes: 1,
      connector_id: 'c1', published_at: '2026-01-01T00:00:00.000Z',
    }), 'EX', 60);
    const live = await ctx.request({ method: 'GET', url: statusUrl, token: editor.token });
    expect(live.json()).toMatchObject({ state: 'connected', points_per_minute: 600, buffered_bytes: 1234, buffer_limit_bytes: 5 * 1024 * 1024 });
    await ctx.request({ method: 'PATCH', url: `${BASE}/${connection.id}`, token: admin.token, payload: { enabled: false } });
    expect((await ctx.request({ method: 'GET', url: statusUrl, token: viewer.token })).json().state).toBe('disabled');
  });
});
