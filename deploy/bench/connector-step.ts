/**
 * The connector step of `npm run bench`: a plant's tags published over MQTT (QoS 1, JSON messages of
 * many tags, as fast as the broker takes them) to a Mosquitto of the step's own, read by the connector
 * process (compiled, as it ships) and delivered through the api's bulk endpoint into ClickHouse. The
 * figures: the sustained points per second from the first publish until every point is stored, and
 * the connector's CPU time per 1,000 points.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import mqtt from 'mqtt';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { encryptSecret, generateSecretKey, parseSecretKey, secretContext } from '@bioprocess/shared/server/integration-secrets';
import { API_KEY_PREFIX, hashToken } from '../../api/src/auth/principal.ts';
import type { BenchPlant } from './fixtures.ts';

export interface ConnectorStepContext {
  base: string;
  pool: Pool;
  clickhouse: ClickHouseClient;
  plant: BenchPlant;
  env: NodeJS.ProcessEnv;
  workDir: string;
  root: string;
  nodeArguments: (entry: string, compiled: boolean) => string[];
  log: (message: string) => void;
  tags?: number;
  seconds?: number;
  tagsPerMessage?: number;
  brokerPort?: number;
}

export interface ConnectorStepResult { points: number; seconds: number; pointsPerSecond: number; cpuSecondsPer1000Points: number; cpuSeconds: number }

const T0 = Date.UTC(2031, 0, 1);

function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
  });
}

export async function benchConnector(context: ConnectorStepContext): Promise<ConnectorStepResult> {
  const tags = context.tags ?? 1000;
  const seconds = context.seconds ?? 120;
  const perMessage = context.tagsPerMessage ?? 50;
  const brokerPort = context.brokerPort ?? 18834;
  const { pool, plant } = context;
  const dir = path.join(context.workDir, 'connector-step');
  mkdirSync(dir, { recursive: true });
  // Mosquitto started as root drops to its own user, which must write its persistence file.
  chmodSync(dir, 0o777);
  writeFileSync(path.join(dir, 'mosquitto.conf'), [
    `listener ${brokerPort} 127.0.0.1`, 'allow_anonymous true', 'persistence true', `persistence_location ${dir}/`, 'max_queued_messages 0', '',
  ].join('\n'));
  const broker = spawn('mosquitto', ['-c', path.join(dir, 'mosquitto.conf')], { stdio: 'ignore' });

  // The tags' instruments, the connection with its own API key (encrypted as the api stores it) and a mapping per tag.
  const { rows: instruments } = await pool.query<{ id: number }>(
    `INSERT INTO instruments (organization_id, equipment_id, name, type)
     SELECT $1, $2, 'Connector tag ' || n, 'other' FROM generate_series(1, $3::int) AS n RETURNING id`,
    [plant.organizationId, plant.equipmentId, tags],
  );
  const secretKeyText = generateSecretKey();
  const secretKey = parseSecretKey(secretKeyText);
  const token = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const { rows: [apiKey] } = await pool.query<{ id: number }>(
    `INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, 'Bench connector', $2, $3, 'editor') RETURNING id`,
    [plant.organizationId, hashToken(token), token.slice(0, 10)],
  );
  const { rows: [connection] } = await pool.query<{ id: number }>(
    `INSERT INTO integration_connections (organization_id, name, kind, endpoint_url, settings, api_key_id)
     VALUES ($1, 'Bench broker', 'mqtt', $2, $3, $4) RETURNING id`,
    [plant.organizationId, `mqtt://127.0.0.1:${brokerPort}`, JSON.stringify({ client_id: `bench-connector-${randomBytes(3).toString('hex')}` }), apiKey!.id],
  );
  const connectionId = connection!.id;
  await pool.query('UPDATE integration_connections SET api_key_ciphertext = $2 WHERE id = $1', [connectionId, encryptSecret(secretKey, token, secretContext.apiKey(connectionId))]);
  const topicOf = (tag: number) => `bench/device/${Math.floor(tag / perMessage)}`;
  await pool.query(
    `INSERT INTO integration_mappings (connection_id, organization_id, source, payload_format, value_path, timestamp_path, instrument_id)
     SELECT $1, $2, topic, 'json', path, '$.ts', instrument FROM unnest($3::text[], $4::text[], $5::bigint[]) AS m(topic, path, instrument)`,
    [connectionId, plant.organizationId, instruments.map((_, tag) => topicOf(tag)), instruments.map((_, tag) => `$.t${tag}`), instruments.map((row) => row.id)],
  );

  const connector = spawn(process.execPath, context.nodeArguments('ingest-worker/src/connectors/main.ts', true), {
    cwd: context.root, stdio: ['ignore', 2, 'inherit'],
    env: { ...context.env, INTEGRATIONS_SECRET_KEY: secretKeyText, CONNECTOR_API_URL: context.base, CONNECTOR_DATA_DIR: path.join(dir, 'buffers'), CONNECTOR_POLL_MS: '500' },
  });
  const stored = async (): Promise<number> => {
    const result = await context.clickhouse.query({
      query: `SELECT count() AS n FROM (SELECT instrument_id, ts FROM points WHERE organization_id = ${plant.organizationId} AND ts >= ${T0} GROUP BY instrument_id, ts)`,
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ n: string }>())[0]!.n);
  };
  try {
    const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${brokerPort}`, { clientId: 'bench-publisher', clean: true });
    // The connector holds the connection once its status says connected (published to Redis every poll).
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM integration_mappings WHERE connection_id = $1', [connectionId]);
      const probe = await fetch(`${context.base}/api/v1/integrations/connections/${connectionId}/status`, { headers: { authorization: `Bearer ${plant.token}` } });
      if (probe.ok && ((await probe.json()) as { state: string }).state === 'connected' && rows[0]!.n === tags) break;
      if (Date.now() > deadline) throw new Error('the connector did not connect within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const points = tags * seconds;
    const cpuBefore = cpuSecondsOf(connector.pid!);
    const started = performance.now();
    const devices = Math.ceil(tags / perMessage);
    for (let second = 0; second < seconds; second += 1) {
      const sends: Array<Promise<unknown>> = [];
      for (let device = 0; device < devices; device += 1) {
        const payload: Record<string, number> = { ts: T0 + second * 1000 };
        for (let tag = device * perMessage; tag < Math.min(tags, (device + 1) * perMessage); tag += 1) payload[`t${tag}`] = tag + second / 1000;
        sends.push(publisher.publishAsync(`bench/device/${device}`, JSON.stringify(payload), { qos: 1 }));
      }
      await Promise.all(sends);
    }
    await publisher.endAsync();
    const storeDeadline = Date.now() + 600_000;
    let count = 0;
    while ((count = await stored()) < points) {
      if (Date.now() > storeDeadline) throw new Error(`only ${count} of ${points} points stored after 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const elapsed = (performance.now() - started) / 1000;
    const cpuSeconds = cpuSecondsOf(connector.pid!) - cpuBefore;
    context.log(`connector: ${points} points (${tags} tags x ${seconds} s, ${perMessage} tags per message) stored in ${elapsed.toFixed(1)} s; connector CPU ${cpuSeconds.toFixed(1)} s`);
    return { points, seconds: elapsed, pointsPerSecond: points / elapsed, cpuSeconds, cpuSecondsPer1000Points: (cpuSeconds / points) * 1000 };
  } finally {
    await stop(connector);
    await stop(broker);
  }
}
