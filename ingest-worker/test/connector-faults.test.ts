/**
 * The connector's guarantee under faults: a feed of many tags at 1 Hz, published at QoS 1 to a
 * Mosquitto of the test's own (persistence on), while the connector is killed with -9 and started
 * again, the broker is restarted, and the api is stopped for a while. Every reading published must be
 * stored exactly once (count and checksums per instrument after deduplication), first stored in source
 * order, with the source's timestamps.
 *
 * Lean by default (200 tags for 40 s, 20 tags per message); FAULT_TAGS, FAULT_SECONDS and
 * FAULT_TAGS_PER_MESSAGE scale it up (1000 tags for several minutes is the full figure).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecretKey } from '@bioprocess/shared/server/integration-secrets';
import {
  createPlant, createTestContext, exited, freePort, killChildren, killHard, spawnProcess, startWorker, stopGently, waitForApi,
  type Plant, type TestContext, type TestUser,
} from '@bioprocess/api/test-support';

const TAGS = Number(process.env.FAULT_TAGS ?? 200);
const SECONDS = Number(process.env.FAULT_SECONDS ?? 40);
const TAGS_PER_MESSAGE = Number(process.env.FAULT_TAGS_PER_MESSAGE ?? 20);
const BROKER_PORT = Number(process.env.FAULT_BROKER_PORT ?? 18830);
const KEY = generateSecretKey();
const T0 = Date.UTC(2025, 5, 1);

/** The value of a tag at a second: exact in a double, distinct per tag and second. */
const valueOf = (tag: number, second: number) => tag * 100_000 + second;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('connector under faults', () => {
  let ctx: TestContext;
  let plant: Plant;
  let admin: TestUser;
  let worker: ReturnType<typeof startWorker>;
  let workDir: string;
  let broker: ChildProcess | null = null;
  const prefix = `bp-fault-${randomBytes(3).toString('hex')}`;

  function startBroker(): ChildProcess {
    const child = spawn('mosquitto', ['-c', path.join(workDir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'ignore'] });
    broker = child;
    return child;
  }

  beforeAll(async () => {
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY });
    plant = await createPlant(ctx, TAGS);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    worker = startWorker(ctx);
    workDir = mkdtempSync(path.join(os.tmpdir(), 'bp-connector-faults-'));
    // Mosquitto started as root drops to its own user, which must be able to write its persistence file.
    chmodSync(workDir, 0o777);
    // Persistence on, and no cap on what a persistent session queues while its client is away.
    writeFileSync(path.join(workDir, 'mosquitto.conf'), [
      `listener ${BROKER_PORT} 127.0.0.1`, 'allow_anonymous true', 'persistence true', `persistence_location ${workDir}/`,
      'autosave_interval 1', 'max_queued_messages 0', 'max_inflight_messages 100', '',
    ].join('\n'));
    startBroker();
  }, 120_000);

  afterAll(async () => {
    await killChildren();
    if (broker && broker.exitCode === null) { broker.kill('SIGKILL'); await exited(broker); }
    await worker?.close();
    await ctx?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('stores every reading exactly once, in order, with the source timestamps', async () => {
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/integrations/connections', token: admin.token,
      payload: { kind: 'mqtt', name: 'Fault broker', endpoint_url: `mqtt://127.0.0.1:${BROKER_PORT}`, settings: { client_id: `${prefix}-connector` } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connectionId = created.json().id as number;
    const devices = Math.ceil(TAGS / TAGS_PER_MESSAGE);
    const mappings = plant.instrumentIds.map((instrumentId, tag) => ({
      source: `${prefix}/device/${Math.floor(tag / TAGS_PER_MESSAGE)}`, payload_format: 'json', value_path: `$.t${tag}`, timestamp_path: '$.ts', instrument_id: instrumentId,
    }));
    const mapped = await ctx.request({ method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/mappings/bulk`, token: admin.token, payload: { mappings } });
    expect(mapped.statusCode, mapped.body).toBe(201);

    const apiPort = await freePort();
    const startApi = () => spawnProcess(ctx, 'api/src/main.ts', { PORT: String(apiPort), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console'), SEED_DEMO: 'false' });
    const startConnector = () => spawnProcess(ctx, 'ingest-worker/src/connectors/main.ts', {
      INTEGRATIONS_SECRET_KEY: KEY, CONNECTOR_API_URL: `http://127.0.0.1:${apiPort}`, CONNECTOR_DATA_DIR: path.join(workDir, 'connector'),
      CONNECTOR_POLL_MS: '250', CONNECTOR_LEASE_MS: '3000', CONNECTOR_RETRY_MAX_MS: '1000',
    });
    let api = startApi();
    await waitForApi(`http://127.0.0.1:${apiPort}`);
    let connector = startConnector();

    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${BROKER_PORT}`, { clientId: `${prefix}-publisher`, clean: false, reconnectPeriod: 300 });
    // The connector subscribes once it holds the connection; the broker keeps the session's messages from then on.
    const deadline = Date.now() + 60_000;
    while (!(await brokerHasSession())) {
      if (Date.now() > deadline) throw new Error('the connector never subscribed');
      await sleep(250);
    }

    const published: Array<Promise<unknown>> = [];
    for (let second = 0; second < SECONDS; second += 1) {
      const tick = Date.now();
      for (let device = 0; device < devices; device += 1) {
        const payload: Record<string, number> = { ts: T0 + second * 1000 };
        for (let tag = device * TAGS_PER_MESSAGE; tag < Math.min(TAGS, (device + 1) * TAGS_PER_MESSAGE); tag += 1) payload[`t${tag}`] = valueOf(tag, second);
        published.push(publisher.publishAsync(`${prefix}/device/${device}`, JSON.stringify(payload), { qos: 1 }));
      }
      if (second === Math.floor(SECONDS * 0.2)) await killHard(connector);
      if (second === Math.floor(SECONDS * 0.35)) connector = startConnector();
      if (second === Math.floor(SECONDS * 0.45)) { const old = broker!; old.kill('SIGTERM'); await exited(old); startBroker(); }
      if (second === Math.floor(SECONDS * 0.6)) await stopGently(api);
      if (second === Math.floor(SECONDS * 0.8)) api = startApi();
      await sleep(Math.max(0, 1000 - (Date.now() - tick)));
    }
    await Promise.all(published);
    await publisher.endAsync();

    const expected = TAGS * SECONDS;
    const stored = async () => {
      const result = await ctx.deps.clickhouse.query({
        query: `SELECT instrument_id, count() AS n, sum(v) AS s, sum(intDiv(ts - ${T0}, 1000) * v) AS w, min(ts) AS first, max(ts) AS last
                  FROM (SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
                          FROM points WHERE organization_id = ${plant.organizationId} GROUP BY instrument_id, ts) WHERE d = 0 GROUP BY instrument_id`,
        format: 'JSONEachRow',
      });
      return result.json<{ instrument_id: string; n: string; s: number; w: number; first: string; last: string }>();
    };
    const waitUntil = Date.now() + 180_000;
    let rows = await stored();
    while (rows.reduce((sum, row) => sum + Number(row.n), 0) < expected && Date.now() < waitUntil) {
      await sleep(1000);
      rows = await stored();
    }
    const byInstrument = new Map(rows.map((row) => [Number(row.instrument_id), row]));
    const problems: string[] = [];
    plant.instrumentIds.forEach((instrumentId, tag) => {
      const row = byInstrument.get(instrumentId);
      let sum = 0;
      let weighted = 0;
      for (let second = 0; second < SECONDS; second += 1) { sum += valueOf(tag, second); weighted += second * valueOf(tag, second); }
      const got = row ? { n: Number(row.n), s: row.s, w: row.w, first: Number(row.first), last: Number(row.last) } : null;
      const want = { n: SECONDS, s: sum, w: weighted, first: T0, last: T0 + (SECONDS - 1) * 1000 };
      if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`tag ${tag}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    });
    expect(problems.slice(0, 5), `${problems.length} of ${TAGS} instruments differ`).toEqual([]);

    // In order: each reading's first write (its lowest version) comes after the previous second's.
    const firstWrites = await ctx.deps.clickhouse.query({
      query: `SELECT instrument_id, ts, min(version) AS first_version FROM points WHERE organization_id = ${plant.organizationId}
               GROUP BY instrument_id, ts ORDER BY instrument_id, ts`,
      format: 'JSONEachRow',
    });
    let outOfOrder = 0;
    let previous: { instrument_id: string; first_version: string } | null = null;
    for (const row of await firstWrites.json<{ instrument_id: string; ts: string; first_version: string }>()) {
      if (previous && previous.instrument_id === row.instrument_id && BigInt(row.first_version) < BigInt(previous.first_version)) outOfOrder += 1;
      previous = row;
    }
    expect(outOfOrder).toBe(0);
    await stopGently(connector);
    await stopGently(api);

    async function brokerHasSession(): Promise<boolean> {
      const status = await ctx.request({ method: 'GET', url: `/api/v1/integrations/connections/${connectionId}/status`, token: admin.token });
      return status.json().state === 'connected';
    }
  }, 600_000);
});
