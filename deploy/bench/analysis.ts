/**
 * The Analyze step of the benchmark: a golden batch of 20 reference unit operations of 14 days each
 * and one target, every one on its own bioreactor with one instrument of each of the 30 instrument
 * types. The envelope parameter is read at 1 Hz (20 x 14 days = 24 million points); the other 29
 * parameters at one reading a minute: an envelope with a step of a minute or more reads the minute
 * rollups, which hold one row per minute whatever the sampling rate, so the deviation over 30
 * parameters reads as many rollup rows as it would at 1 Hz. Points are generated inside ClickHouse
 * (INSERT ... SELECT from system.numbers) and their rollups computed by the ingest-worker's own code.
 */
import { createHash, randomBytes } from 'node:crypto';
import { INSTRUMENT_TYPES } from '@bioprocess/shared/enums';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { recomputeRollups } from '@bioprocess/ingest-worker';

const DAY_MS = 86_400_000;

export interface AnalysisPlant {
  token: string;
  referenceIds: number[];
  targetId: number;
}

interface Sizes { references: number; days: number }

async function session(pool: Pool, organizationId: number): Promise<string> {
  const user = await pool.query(
    `INSERT INTO users (email, name, organization_id, role) VALUES ($1, 'Bench analyst', $2, 'editor') RETURNING id`,
    [`bench-analysis-${randomBytes(4).toString('hex')}@example.test`, organizationId]);
  const token = `bps_${randomBytes(32).toString('base64url')}`;
  await pool.query(`INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 day')`,
    [createHash('sha256').update(token).digest('hex'), user.rows[0].id]);
  return token;
}

async function nextVersionSeq(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_version_seq')::text AS v");
  return Number(rows[0]!.v);
}

/** Seeds the unit operations and their readings; `log` reports progress. */
export async function seedAnalysisPlant(pool: Pool, clickhouse: ClickHouseClient, sizes: Sizes, t0: number, log: (message: string) => void): Promise<AnalysisPlant> {
  const org = await pool.query(`INSERT INTO organizations (name) VALUES ('Bench analysis') RETURNING id`);
  const organizationId = Number(org.rows[0].id);
  const token = await session(pool, organizationId);
  const facility = await pool.query(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Bench hall', 'lab') RETURNING id`, [organizationId]);
  const unitOperationIds: number[] = [];
  const spanMs = Math.round(sizes.days * DAY_MS);
  for (let index = 0; index <= sizes.references; index += 1) {
    const equipment = await pool.query(
      `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
      [organizationId, facility.rows[0].id, `Bench reactor ${index}`]);
    const equipmentId = Number(equipment.rows[0].id);
    const instruments = await pool.query<{ id: string }>(
      `INSERT INTO instruments (organization_id, equipment_id, name, type)
       SELECT $1, $2, type || ' probe', type FROM unnest($3::text[]) WITH ORDINALITY AS t(type, n) ORDER BY n RETURNING id`,
      [organizationId, equipmentId, [...INSTRUMENT_TYPES]]);
    const instrumentIds = instruments.rows.map((row) => Number(row.id));
    // Unit operations start at odd seconds, so the envelope also reads the raw points of their partial first and last minutes.
    const startMs = t0 + index * (spanMs + DAY_MS) + 17_000;
    const endMs = startMs + spanMs - 1_000;
    const run = await pool.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, $3, 'titer') RETURNING id`,
      [organizationId, facility.rows[0].id, index === sizes.references ? 'Bench target' : `Bench reference ${index}`]);
    const unitOperation = await pool.query(
      `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time) VALUES ($1, $2, 'fermentation', $3, $4, $5) RETURNING id`,
      [organizationId, run.rows[0].id, equipmentId, new Date(startMs), new Date(endMs)]);
    unitOperationIds.push(Number(unitOperation.rows[0].id));

    // The target drifts: every parameter of it sits 3 units above the references' shapes after the first day.
    const drift = index === sizes.references ? `+ if(number * 1000 > ${DAY_MS}, 3, 0)` : '';
    const offset = (index % 5) * 0.2;
    const seconds = Math.round(spanMs / 1000);
    const firstSeq = await nextVersionSeq(pool);
    await clickhouse.command({
      query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
        SELECT ${organizationId}, ${instrumentIds[0]}, ${startMs} + toInt64(number) * 1000,
               37 + ${offset} + 2 * sin(number / 7200) + (cityHash64(number, ${index}) % 1000) / 5000 ${drift},
               toUInt64('${firstSeq}0000000000') + number + 1, 0
          FROM system.numbers LIMIT ${seconds}`,
    });
    const minutes = Math.round(spanMs / 60_000);
    const otherSeq = await nextVersionSeq(pool);
    const others = instrumentIds.slice(1);
    await clickhouse.command({
      query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
        SELECT ${organizationId}, [${others.join(',')}][intDiv(number, ${minutes}) + 1] AS instrument, ${startMs} + toInt64(number % ${minutes}) * 60000,
               10 * intDiv(number, ${minutes}) + ${offset} + sin((number % ${minutes}) / 120) + (cityHash64(number, ${index}) % 1000) / 5000 ${drift.replace('number * 1000', `(number % ${minutes}) * 60000`)},
               toUInt64('${otherSeq}0000000000') + number + 1, 0
          FROM system.numbers LIMIT ${minutes * others.length}`,
    });
    const range = { organizationId, instrumentIds, startMs, endMs };
    await recomputeRollups(clickhouse, pool, [{ range }]);
    log(`analysis: unit operation ${index + 1} of ${sizes.references + 1} stored (${seconds} + ${minutes * others.length} points)`);
  }
  return { token, referenceIds: unitOperationIds.slice(0, sizes.references), targetId: unitOperationIds[sizes.references]! };
}

/** p95 of `count` sequential POSTs, and the last answer. */
export async function timedPosts(url: string, token: string, body: unknown, count: number): Promise<{ p95: number; last: unknown }> {
  const timings: number[] = [];
  let last: unknown = null;
  for (let request = 0; request < count; request += 1) {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    last = await response.json();
    timings.push(performance.now() - started);
    if (response.status !== 200 && response.status !== 201) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(last).slice(0, 300)}`);
  }
  timings.sort((a, b) => a - b);
  return { p95: timings[Math.ceil(timings.length * 0.95) - 1]!, last };
}
