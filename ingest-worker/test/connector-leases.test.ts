/**
 * Several connectors share the connections: two connector processes take one connection each (their
 * fair share), and when one is killed with -9 its connection moves to the other once its lease lapses,
 * which then stores what is published to it. Against the shared Mosquitto, with unique topics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecretKey } from '@bioprocess/shared/server/integration-secrets';
import { integrationKeys } from '@bioprocess/shared/server/integration-protocol';
import {
  createPlant, createTestContext, createUnitOperation, killChildren, killHard, spawnProcess, startWorker, type Plant, type TestContext, type TestUser,
} from '@bioprocess/api/test-support';
import { until } from '../../shared/test/support/until.ts';

/** Leases expire and are taken over in their own time: a lost connector's connection moves within this. */
const LEASE_WAIT_MS = 90_000;

const BROKER = 'mqtt://127.0.0.1:1883';
const KEY = generateSecretKey();
const T0 = Date.UTC(2025, 8, 1);


describe('connectors sharing connections', () => {
  let ctx: TestContext;
  let plant: Plant;
  let admin: TestUser;
  let worker: ReturnType<typeof startWorker>;
  let dataDir: string;
  const prefix = `bp-lease-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY });
    plant = await createPlant(ctx, 0);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    worker = startWorker(ctx);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'bp-connector-leases-'));
  }, 120_000);
  afterAll(async () => {
    await killChildren();
    await worker?.close();
    await ctx?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives each connector its share, and a killed connector\'s connection to the other', async () => {
    const unitOperationId = await createUnitOperation(ctx, plant);
    const connections: Array<{ id: number; instrumentId: number; topic: string }> = [];
    for (const name of ['A', 'B']) {
      const created = await ctx.request({
        method: 'POST', url: '/api/v1/integrations/connections', token: admin.token,
        payload: { kind: 'mqtt', name: `Broker ${name}`, endpoint_url: BROKER, settings: { client_id: `${prefix}-${name}` } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const topic = `${prefix}/${name}/value`;
      const mapped = await ctx.request({
        method: 'POST', url: `/api/v1/integrations/connections/${created.json().id}/mappings`, token: admin.token,
        payload: { source: topic, payload_format: 'json', value_path: '$.v', timestamp_path: '$.ts', instrument: { unit_operation_id: unitOperationId, name: `Value ${name}` } },
      });
      expect(mapped.statusCode, mapped.body).toBe(201);
      connections.push({ id: created.json().id, instrumentId: mapped.json().instrument_id, topic });
    }
    const { port } = ctx.app.server.address() as { port: number };
    const start = () => spawnProcess(ctx, 'ingest-worker/src/connectors/main.ts', {
      INTEGRATIONS_SECRET_KEY: KEY, CONNECTOR_API_URL: `http://127.0.0.1:${port}`, CONNECTOR_DATA_DIR: dataDir,
      CONNECTOR_POLL_MS: '250', CONNECTOR_LEASE_MS: '2000',
    });
    const first = start();
    const second = start();
    const holderOf = async (connectionId: number) => {
      const published = await ctx.deps.redis.get(integrationKeys.status(ctx.env.QUEUE_PREFIX, connectionId));
      const status = published ? JSON.parse(published) as { state: string; connector_id: string } : null;
      return status?.state === 'connected' ? status.connector_id : null;
    };
    // Whichever starts first may take both; the share evens out to one connection each.
    const holders = await until('each connector to run one connection', async () => {
      const [a, b] = await Promise.all(connections.map((connection) => holderOf(connection.id)));
      return a && b && a !== b ? [a, b] : null;
    }, LEASE_WAIT_MS);
    const firstId = await until('the first connector to be identified', async () => {
      const keys = await ctx.deps.redis.keys(integrationKeys.connectorPattern(ctx.env.QUEUE_PREFIX));
      // A connector's id is <host>-<pid>-<random>.
      return keys.map((key) => key.split(':').at(-1)!).find((id) => id.includes(`-${first.pid}-`)) ?? null;
    }, LEASE_WAIT_MS);
    const moved = connections[holders.indexOf(firstId)]!;

    await killHard(first);
    await until('the killed connector\'s connection to move', async () => {
      const holder = await holderOf(moved.id);
      return holder !== null && holder !== firstId ? holder : null;
    }, LEASE_WAIT_MS);
    const publisher = await mqtt.connectAsync(BROKER, { clientId: `${prefix}-publisher`, clean: true });
    await publisher.publishAsync(moved.topic, JSON.stringify({ ts: T0, v: 42 }), { qos: 1 });
    await publisher.endAsync();
    const stored = await until('the reading to be stored', async () => {
      const result = await ctx.deps.clickhouse.query({
        query: `SELECT ts, value FROM points WHERE organization_id = ${plant.organizationId} AND instrument_id = ${moved.instrumentId}`, format: 'JSONEachRow',
      });
      const rows = await result.json<{ ts: string; value: number }>();
      return rows.length > 0 ? rows : null;
    }, LEASE_WAIT_MS);
    expect(stored.map((row) => [Number(row.ts), row.value])).toEqual([[T0, 42]]);
    await killHard(second);
  }, 180_000);
});
