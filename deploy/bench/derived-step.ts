/**
 * The derived-parameter step of `npm run bench`: OUR (three inputs) computed over a 14-day unit
 * operation of 1 Hz readings (1.2 M points per input), downsampled to 2,000 values; p95 of 50 reads
 * against a target of 300 ms, with a plain 2,000-value read of one input as the baseline.
 */
import type pg from 'pg';
import type { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { recomputeRollups } from '@bioprocess/ingest-worker';
import type { BenchPlant } from './fixtures.ts';

const DAY_MS = 86_400_000;
const READS = 50;

export interface DerivedStepContext {
  pool: pg.Pool;
  clickhouse: ReturnType<typeof createClickHouse>;
  base: string;
  plant: BenchPlant;
  scale: number;
  startMs: number;
  log: (message: string) => void;
}

async function p95Of(url: string, token: string): Promise<number> {
  const timings: number[] = [];
  for (let i = 0; i < READS; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    timings.push(performance.now() - started);
  }
  timings.sort((a, b) => a - b);
  return timings[Math.ceil(timings.length * 0.95) - 1]!;
}

export async function benchDerived(context: DerivedStepContext): Promise<{ p95: number; baselineP95: number; points: number }> {
  const { pool, clickhouse, plant, startMs } = context;
  const seconds = Math.max(3_600, Math.round(14 * DAY_MS / 1_000 * context.scale));
  const signals = {
    exhaust_o2: '20.9 - 2 * pow(sin(number / 20000), 2)',
    exhaust_co2: '0.04 + 1.5 * pow(sin(number / 20000), 2)',
    gas_flow_rate: '2 + number / 1000000',
  };
  const equipment = await pool.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type)
     SELECT $1, facility_id, 'Bench off-gas reactor', 'bioreactor' FROM equipment WHERE id = $2 RETURNING id`,
    [plant.organizationId, plant.equipmentId]);
  const equipmentId = equipment.rows[0].id as number;
  const instrumentIds: number[] = [];
  const { rows: version } = await pool.query<{ v: string }>("SELECT nextval('time_series_version_seq')::text AS v");
  const versionSeq = Number(version[0]!.v);
  context.log(`derived: seeding ${Object.keys(signals).length} inputs x ${seconds} readings`);
  for (const [type, expression] of Object.entries(signals)) {
    const { rows } = await pool.query(
      'INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, $3, $4) RETURNING id', [plant.organizationId, equipmentId, `Bench ${type}`, type]);
    const instrumentId = rows[0].id as number;
    instrumentIds.push(instrumentId);
    await clickhouse.command({
      query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
        SELECT ${plant.organizationId}, ${instrumentId}, ${startMs} + toInt64(number) * 1000, ${expression},
               toUInt64('${versionSeq}0000000000') + number + 1, 0
          FROM system.numbers LIMIT ${seconds}`,
    });
  }
  await recomputeRollups(clickhouse, pool, [{ range: { organizationId: plant.organizationId, instrumentIds, startMs, endMs: startMs + (seconds - 1) * 1_000 } }]);
  const run = await pool.query('SELECT run_id FROM unit_operations WHERE id = $1', [plant.unitOperationId]);
  const unitOperation = await pool.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time, properties)
     VALUES ($1, $2, 'fermentation', $3, $4, $5, '{"working_volume": 2.5}') RETURNING id`,
    [plant.organizationId, run.rows[0].run_id, equipmentId, new Date(startMs).toISOString(), new Date(startMs + (seconds - 1) * 1_000).toISOString()]);
  const unitOperationId = unitOperation.rows[0].id as number;

  const list = await fetch(`${context.base}/api/v1/derived-parameters`, { headers: { authorization: `Bearer ${plant.token}` } });
  const our = ((await list.json()) as Array<{ id: number; library_key: string | null }>).find((entry) => entry.library_key === 'our');
  if (!our) throw new Error('the library has no OUR');
  const url = `${context.base}/api/v1/unit-operations/${unitOperationId}/derived/${our.id}?limit=2000`;
  const probe = (await (await fetch(url, { headers: { authorization: `Bearer ${plant.token}` } })).json()) as { points: unknown[] };
  const baselineP95 = await p95Of(`${context.base}/api/v1/time-series-data?instrument_id=${instrumentIds[0]}&limit=2000`, plant.token);
  return { p95: await p95Of(url, plant.token), baselineP95, points: probe.points.length };
}
