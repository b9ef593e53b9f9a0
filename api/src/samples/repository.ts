/** Sample rows in PostgreSQL (samples and their sample_results): every query the sample routes make, and the wire form. */
import type pg from 'pg';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { SAMPLE_MESSAGES, type Sample, type SampleFlag } from '@bioprocess/shared/samples';
import { lockUnitOperationForChildren } from '@bioprocess/shared/server/unit-operations-repository';
import { notFound } from '../platform/http-error.ts';
import type { RowPage } from '../platform/organization-rows.ts';

type Db = pg.Pool | pg.PoolClient;

interface StoredResult {
  analyte: string;
  value: number;
  flag: SampleFlag | null;
  unit: string;
  method: string | null;
  measured_at: string | null;
}

export interface SampleRow {
  id: number;
  organization_id: number;
  unit_operation_id: number;
  sample_id: string;
  drawn_at: Date;
  notes: string | null;
  results: StoredResult[];
  created_at: Date;
  updated_at: Date;
}

/** What a sample is set to: its own fields and all its results, in their order. */
export interface SampleValues {
  sampleId: string;
  drawnAt: string;
  notes: string | null;
  results: Array<{ analyte: string; value: number; flag: SampleFlag | null; unit: string; method: string | null; measured_at: string | null }>;
}

/** Samples with their results in their entered order, as one JSON array per sample. */
const SAMPLE_SELECT = `
  SELECT s.id, s.organization_id, s.unit_operation_id, s.sample_id, s.drawn_at, s.notes, s.created_at, s.updated_at,
         coalesce((SELECT json_agg(json_build_object('analyte', r.analyte, 'value', r.value, 'flag', r.flag, 'unit', r.unit,
                                                     'method', r.method, 'measured_at', r.measured_at) ORDER BY r.position)
                     FROM sample_results r WHERE r.sample_row_id = s.id), '[]'::json) AS results
    FROM samples s`;

export function toSample(row: SampleRow): Sample {
  return {
    id: row.id,
    organization_id: row.organization_id,
    unit_operation_id: row.unit_operation_id,
    sample_id: row.sample_id,
    drawn_at: toIsoTimestamp(row.drawn_at),
    notes: row.notes,
    results: row.results.map((result) => ({ ...result, measured_at: toIsoTimestamp(result.measured_at) })),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

/** Whether saving `values` would leave the stored sample as it is (then nothing is written or audited). */
export function isUnchanged(row: SampleRow, values: SampleValues): boolean {
  const stored = toSample(row);
  const normalizedTime = (value: string | null) => (value === null ? null : new Date(value).toISOString());
  return stored.sample_id === values.sampleId
    && stored.drawn_at === normalizedTime(values.drawnAt)
    && stored.notes === values.notes
    && stored.results.length === values.results.length
    && stored.results.every((result, index) => {
      const given = values.results[index]!;
      return result.analyte === given.analyte && result.value === given.value && result.flag === given.flag
        && result.unit === given.unit && result.method === given.method && result.measured_at === normalizedTime(given.measured_at);
    });
}

/** The sample if it belongs to the organisation; another organisation's sample is "not found". */
export async function requireSample(db: Db, organizationId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<SampleRow> {
  const { rows } = await db.query<SampleRow>(
    `${SAMPLE_SELECT} WHERE s.id = $1 AND s.organization_id = $2${options.forUpdate ? ' FOR UPDATE OF s' : ''}`,
    [id, organizationId],
  );
  if (!rows[0]) throw notFound(SAMPLE_MESSAGES.notFound);
  return rows[0];
}

/** The samples of one unit operation (already checked to be the organisation's), by drawn time. */
export async function listUnitOperationSamples(db: Db, unitOperationId: number, page: { limit: number; offset: number }): Promise<RowPage<SampleRow>> {
  const [list, count] = await Promise.all([
    db.query<SampleRow>(`${SAMPLE_SELECT} WHERE s.unit_operation_id = $1 ORDER BY s.drawn_at, s.id LIMIT $2 OFFSET $3`, [unitOperationId, page.limit, page.offset]),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM samples WHERE unit_operation_id = $1', [unitOperationId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/** The samples of unit operations (already checked to be the organisation's), by unit operation, then drawn time: what an export writes. */
export async function listSamplesOfUnitOperations(db: Db, organizationId: number, unitOperationIds: readonly number[]): Promise<SampleRow[]> {
  if (unitOperationIds.length === 0) return [];
  const { rows } = await db.query<SampleRow>(
    `${SAMPLE_SELECT} WHERE s.organization_id = $1 AND s.unit_operation_id = ANY($2::bigint[]) ORDER BY s.unit_operation_id, s.drawn_at, s.id`,
    [organizationId, [...unitOperationIds]],
  );
  return rows;
}

/** The organisation's unit operations that hold samples, by id. */
export async function listUnitOperationIdsWithSamples(db: Db, organizationId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT DISTINCT unit_operation_id AS id FROM samples WHERE organization_id = $1 ORDER BY unit_operation_id', [organizationId]);
  return rows.map((row) => Number(row.id));
}

/**
 * Serialises the changes to one unit operation's samples (grid saves, single edits) so that a save
 * sees every sample id the others committed.
 */
export async function lockUnitOperationSamples(db: pg.PoolClient, unitOperationId: number): Promise<SampleRow[]> {
  await lockUnitOperationForChildren(db, unitOperationId);
  const { rows } = await db.query<SampleRow>(`${SAMPLE_SELECT} WHERE s.unit_operation_id = $1 ORDER BY s.id FOR UPDATE OF s`, [unitOperationId]);
  return rows;
}

async function writeResults(db: pg.PoolClient, sampleRowId: number, results: SampleValues['results']): Promise<void> {
  await db.query('DELETE FROM sample_results WHERE sample_row_id = $1', [sampleRowId]);
  if (results.length === 0) return;
  await db.query(
    `INSERT INTO sample_results (sample_row_id, position, analyte, value, flag, unit, method, measured_at)
     SELECT $1, ordinality, analyte, value, flag, unit, method, measured_at
       FROM unnest($2::text[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
            WITH ORDINALITY AS r(analyte, value, flag, unit, method, measured_at, ordinality)`,
    [
      sampleRowId,
      results.map((result) => result.analyte),
      results.map((result) => result.value),
      results.map((result) => result.flag),
      results.map((result) => result.unit),
      results.map((result) => result.method),
      results.map((result) => result.measured_at),
    ],
  );
}

export async function insertSample(db: pg.PoolClient, organizationId: number, unitOperationId: number, values: SampleValues): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO samples (organization_id, unit_operation_id, sample_id, drawn_at, notes) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [organizationId, unitOperationId, values.sampleId, values.drawnAt, values.notes],
  );
  const id = rows[0]!.id;
  await writeResults(db, id, values.results);
  return id;
}

export async function replaceSample(db: pg.PoolClient, organizationId: number, id: number, values: SampleValues): Promise<void> {
  await db.query(
    `UPDATE samples SET sample_id = $3, drawn_at = $4, notes = $5, updated_at = now() WHERE id = $1 AND organization_id = $2`,
    [id, organizationId, values.sampleId, values.drawnAt, values.notes],
  );
  await writeResults(db, id, values.results);
}

export async function deleteSamples(db: pg.PoolClient, organizationId: number, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query('DELETE FROM samples WHERE id = ANY($1::bigint[]) AND organization_id = $2', [ids, organizationId]);
}

/** Re-reads samples after a write, in the order of `ids`. */
export async function readSamples(db: Db, organizationId: number, ids: number[]): Promise<SampleRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<SampleRow>(`${SAMPLE_SELECT} WHERE s.id = ANY($1::bigint[]) AND s.organization_id = $2`, [ids, organizationId]);
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  return ids.map((id) => byId.get(id)!);
}

/** A sample id taken twice within a unit operation: the deferred unique constraint reports it at commit. */
export function isSampleIdTaken(error: unknown): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown };
  return pgError.code === '23505' && pgError.constraint === 'samples_sample_id_unique';
}
