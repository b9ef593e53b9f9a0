/**
 * The connector end to end against the real Mosquitto (127.0.0.1:1883), the api listening on a port of
 * its own and an ingest-worker: a connection and its mappings made through the HTTP api, JSON,
 * Sparkplug B and plain-number payloads published at QoS 1, and the readings found in ClickHouse with
 * the source's timestamps; bad quality stored as missing with its code or dropped per mapping, and
 * Sparkplug's historical flag stored with the reading; browsing lists the topics seen; the status says
 * connected with the points counted. And an OPC UA server's bad reading, stored with its StatusCode.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorEnvSchema, parseEnv } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { generateSecretKey } from '@bioprocess/shared/server/integration-secrets';
import { createPlant, createTestContext, createUnitOperation, startWorker, type Plant, type TestContext, type TestUser } from '@bioprocess/api/test-support';
import { Connector } from '../src/connectors/connector.ts';
import { SOURCE_FACTORIES } from '../src/connectors/sources/index.ts';
import { sparkplug } from '../src/connectors/sources/mqtt-payloads.ts';
import { StatusCodes } from 'node-opcua-client';
import { startDemoOpcuaServer, type DemoOpcuaServer } from '../src/connectors/demo/opcua-bioreactor-server.ts';
import { until } from '../../shared/test/support/until.ts';

const BROKER = 'mqtt://127.0.0.1:1883';
const KEY = generateSecretKey();
const T0 = Date.UTC(2025, 2, 1, 8);
const OPCUA_CONSTANT = { temperature: 37, ph: 7, dissolvedO2: 40, stirRate: 600, feedRate: 0.2, opticalDensity: 20, exhaustCo2: 3, exhaustO2: 18, airFlow: 2 };


describe('MQTT connector', () => {
  let ctx: TestContext;
  let plant: Plant;
  let admin: TestUser;
  let worker: ReturnType<typeof startWorker>;
  let connector: Connector;
  let publisher: mqtt.MqttClient;
  let dataDir: string;
  let opcuaServer: DemoOpcuaServer | undefined;
  const prefix = `bp-test-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY });
    plant = await createPlant(ctx, 0);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address() as { port: number };
    worker = startWorker(ctx);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'bp-connector-'));
    const env = parseEnv(connectorEnvSchema, {
      DATABASE_URL: ctx.env.DATABASE_URL, REDIS_URL: ctx.env.REDIS_URL, QUEUE_PREFIX: ctx.env.QUEUE_PREFIX, INTEGRATIONS_SECRET_KEY: KEY,
      CONNECTOR_API_URL: `http://127.0.0.1:${address.port}`, CONNECTOR_DATA_DIR: dataDir, CONNECTOR_POLL_MS: '200', CONNECTOR_LEASE_MS: '5000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    });
    connector = new Connector({ env, pg: ctx.deps.pg, log: createLogger('connector-test', env.LOG_LEVEL), factories: SOURCE_FACTORIES });
    await connector.start();
    publisher = await mqtt.connectAsync(BROKER, { clientId: `${prefix}-publisher`, clean: true });
  });
  /** Each stored reading's time, quality code and historical flag (newest version per time). */
  const sourceDetails = async (organizationId: number, instrumentId: number) => {
    const result = await ctx.deps.clickhouse.query({
      query: `SELECT ts, argMax(tuple(quality), version).1 AS q, argMax(historical, version) AS h FROM points
        WHERE organization_id = ${organizationId} AND instrument_id = ${instrumentId} GROUP BY ts ORDER BY ts`,
      format: 'JSONEachRow',
    });
    return (await result.json<{ ts: string; q: number | null; h: number }>()).map((row) => [Number(row.ts), row.q, row.h] as const);
  };

  afterAll(async () => {
    await publisher?.endAsync();
    await connector?.stop();
    await opcuaServer?.stop();
    await worker?.close();
    await ctx?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stores JSON, Sparkplug B and number payloads with the source timestamps, and browses and reports what it saw', async () => {
    const unitOperationId = await createUnitOperation(ctx, plant);
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/integrations/connections', token: admin.token,
      payload: { kind: 'mqtt', name: 'Lab broker', endpoint_url: BROKER, settings: { client_id: `${prefix}-connector` } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connectionId = created.json().id as number;
    const instrument = (name: string, unit: string) => ({ unit_operation_id: unitOperationId, name, unit });
    const mapped = await ctx.request({
      method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/mappings/bulk`, token: admin.token,
      payload: { mappings: [
        { source: `${prefix}/pioreactor/+/od`, payload_format: 'json', value_path: '$.od_reading.value', timestamp_path: '$.timestamp', instrument: instrument('OD', '1') },
        { source: `spBv1.0/${prefix}/DDATA/edge/r1`, payload_format: 'sparkplug', value_path: 'Temperature', instrument: instrument('Temperature', 'Cel') },
        { source: `spBv1.0/${prefix}/DDATA/edge/r1`, payload_format: 'sparkplug', value_path: 'pH', bad_quality: 'missing', instrument: instrument('pH', '[pH]') },
        { source: `spBv1.0/${prefix}/DDATA/edge/r1`, payload_format: 'sparkplug', value_path: 'DO', bad_quality: 'drop', instrument: instrument('DO', '%') },
        { source: `${prefix}/stirrer/rpm`, payload_format: 'number', instrument: instrument('Stirrer', '{rpm}') },
      ] },
    });
    expect(mapped.statusCode, mapped.body).toBe(201);
    const [od, temperature, ph, dissolvedO2, stirrer] = (mapped.json() as Array<{ instrument_id: number }>).map((mapping) => mapping.instrument_id);

    await until('the connection to be connected', async () => {
      const status = await ctx.request({ method: 'GET', url: `/api/v1/integrations/connections/${connectionId}/status`, token: admin.token });
      return status.json().state === 'connected';
    });

    for (let second = 0; second < 5; second += 1) {
      await publisher.publishAsync(`${prefix}/pioreactor/unit1/od`, JSON.stringify({ timestamp: new Date(T0 + second * 1000).toISOString(), od_reading: { value: 0.1 * (second + 1) } }), { qos: 1 });
      const metrics = [
        // Second 3 is a historical value (an edge node's store-and-forward replay).
        { name: 'Temperature', type: 'Double', value: 30 + second, timestamp: T0 + second * 1000, ...(second === 3 ? { isHistorical: true } : {}) },
        // Second 2 is bad quality (OPC DA 0 = bad): stored as missing for pH, dropped for DO.
        { name: 'pH', type: 'Double', value: 7 + second / 10, timestamp: T0 + second * 1000, ...(second === 2 ? { properties: { Quality: { type: 'Int32', value: 0 } } } : {}) },
        { name: 'DO', type: 'Double', value: 40 - second, timestamp: T0 + second * 1000, ...(second === 2 ? { properties: { Quality: { type: 'Int32', value: 0 } } } : {}) },
      ];
      await publisher.publishAsync(`spBv1.0/${prefix}/DDATA/edge/r1`, Buffer.from(sparkplug.encodePayload({ timestamp: T0 + second * 1000, metrics, seq: second })), { qos: 1 });
    }
    await publisher.publishAsync(`${prefix}/stirrer/rpm`, '250', { qos: 1 });

    const read = async (instrumentId: number) => {
      const result = await ctx.deps.clickhouse.query({
        query: `SELECT ts, argMax(value, version) AS v FROM points WHERE organization_id = ${plant.organizationId} AND instrument_id = ${instrumentId} GROUP BY ts ORDER BY ts`,
        format: 'JSONEachRow',
      });
      return (await result.json<{ ts: string; v: number | null }>()).map((row) => [Number(row.ts), row.v] as const);
    };
    await until('every reading stored', async () => (await read(od!)).length === 5 && (await read(dissolvedO2!)).length === 4 && (await read(stirrer!)).length === 1);
    expect(await read(od!)).toEqual([0, 1, 2, 3, 4].map((second) => [T0 + second * 1000, 0.1 * (second + 1)]));
    expect(await read(temperature!)).toEqual([0, 1, 2, 3, 4].map((second) => [T0 + second * 1000, 30 + second]));
    expect(await read(ph!)).toEqual([0, 1, 2, 3, 4].map((second) => [T0 + second * 1000, second === 2 ? null : 7 + second / 10]));
    expect(await read(dissolvedO2!)).toEqual([0, 1, 3, 4].map((second) => [T0 + second * 1000, 40 - second]));
    expect((await read(stirrer!))[0]![1]).toBe(250);
    // What the source said is kept: pH's bad second with its Sparkplug code, Temperature's historical second.
    expect(await sourceDetails(plant.organizationId, ph!)).toEqual([0, 1, 2, 3, 4].map((second) => [T0 + second * 1000, second === 2 ? 0 : null, 0]));
    expect(await sourceDetails(plant.organizationId, temperature!)).toEqual([0, 1, 2, 3, 4].map((second) => [T0 + second * 1000, null, second === 3 ? 1 : 0]));
    const raw = await ctx.request({
      method: 'GET', url: `/api/v1/time-series-data?instrument_id=${temperature}&start_time=${T0}&end_time=${T0 + 4000}`, token: admin.token,
    });
    expect(raw.statusCode, raw.body).toBe(200);
    expect((raw.json() as Array<{ historical?: boolean }>).map((reading) => reading.historical ?? false)).toEqual([false, false, false, true, false]);

    const browse = await ctx.request({ method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/browse`, token: admin.token, payload: { node_id: prefix } });
    expect(browse.statusCode, browse.body).toBe(200);
    const topics = (browse.json().items as Array<{ id: string; data_type: string; sample: string }>);
    expect(topics.map((item) => item.id)).toEqual([`${prefix}/pioreactor/unit1/od`, `${prefix}/stirrer/rpm`]);
    expect(topics[1]).toMatchObject({ data_type: 'number', sample: '250' });
    const sparkplugTopics = await ctx.request({ method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/browse`, token: admin.token, payload: { node_id: `spBv1.0/${prefix}/` } });
    expect(sparkplugTopics.json().items[0]).toMatchObject({ id: `spBv1.0/${prefix}/DDATA/edge/r1`, data_type: 'sparkplug' });
    expect(sparkplugTopics.json().items[0].sample).toContain('Temperature');

    // The status is published every few seconds: the points may be counted before the buffer's last batch was sent.
    const status = await until('the status to count the points and the buffer to empty', async () => {
      const answer = (await ctx.request({ method: 'GET', url: `/api/v1/integrations/connections/${connectionId}/status`, token: admin.token })).json();
      return answer.points_per_minute >= 20 && answer.buffered_bytes === 0 ? answer : null;
    });
    expect(status).toMatchObject({ state: 'connected', points_per_minute: 20, buffered_bytes: 0 });
    // Other feeds on the shared broker reach the browsing subscription too: at least ours were counted.
    expect(status.messages_per_minute).toBeGreaterThanOrEqual(11);
    expect(status.last_message_at).not.toBeNull();
  });

  it('stores an OPC UA reading of bad quality as missing with its StatusCode, and an uncertain one with its value and code', async () => {
    // Stopped after the connector (afterAll): a connector whose server went away keeps reconnecting.
    const server = await startDemoOpcuaServer({ port: 0, reactors: [{ name: 'BR-09', read: () => OPCUA_CONSTANT }] });
    opcuaServer = server;
    server.pause();
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/integrations/connections', token: admin.token,
      payload: { kind: 'opcua', name: 'BR-09 controller', endpoint_url: server.endpointUrl },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connectionId = created.json().id as number;
    const unitOperationId = await createUnitOperation(ctx, plant);
    const mapped = await ctx.request({
      method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/mappings`, token: admin.token,
      payload: { source: server.nodeIds.get('BR-09')!.get('ph')!, bad_quality: 'missing', instrument: { unit_operation_id: unitOperationId, name: 'BR-09 pH', unit: '[pH]' } },
    });
    expect(mapped.statusCode, mapped.body).toBe(201);
    const instrumentId = mapped.json().instrument_id as number;
    await until('the OPC UA connection to be connected', async () => {
      const status = await ctx.request({ method: 'GET', url: `/api/v1/integrations/connections/${connectionId}/status`, token: admin.token });
      return status.json().state === 'connected';
    });
    const stamps = [0, 1, 2].map((second) => new Date(T0 + 60_000 + second * 1000));
    // The subscription also delivers the node's value when it starts (stamped now): only the test's times count.
    const readings = async () => (await sourceDetails(plant.organizationId, instrumentId)).filter(([ts]) => ts >= stamps[0]!.getTime() && ts <= stamps[2]!.getTime());
    const values: Array<[number, typeof StatusCodes.Good]> = [[7.1, StatusCodes.Good], [6.9, StatusCodes.BadSensorFailure], [7.05, StatusCodes.UncertainLastUsableValue]];
    // One value at a time (a subscription may merge changes within its sampling interval), each set
    // again until stored (the subscription may start after a first set).
    for (const [index, [value, code]] of values.entries()) {
      await until(`OPC UA reading ${index} stored`, async () => {
        server.set('BR-09', 'ph', value, code, stamps[index]);
        return (await readings()).length === index + 1;
      });
    }
    expect(await readings()).toEqual([
      [stamps[0]!.getTime(), null, 0],
      [stamps[1]!.getTime(), StatusCodes.BadSensorFailure.value, 0],
      [stamps[2]!.getTime(), StatusCodes.UncertainLastUsableValue.value, 0],
    ]);
    const raw = await ctx.request({
      method: 'GET', url: `/api/v1/time-series-data?instrument_id=${instrumentId}&start_time=${stamps[0]!.getTime()}&end_time=${stamps[2]!.getTime()}`, token: admin.token,
    });
    expect(raw.json()).toEqual([
      { ts: stamps[0]!.toISOString(), instrument_id: instrumentId, value: 7.1 },
      { ts: stamps[1]!.toISOString(), instrument_id: instrumentId, value: null, quality: StatusCodes.BadSensorFailure.value },
      { ts: stamps[2]!.toISOString(), instrument_id: instrumentId, value: 7.05, quality: StatusCodes.UncertainLastUsableValue.value },
    ]);
  });
});
