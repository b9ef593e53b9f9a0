/** Golden-batch rows: the organisation-scoped queries and the wire form. */
import type pg from 'pg';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { ANALYSIS_MESSAGES, type Alignment, type Band, type GoldenBatch, type InstrumentOverride, type Tolerances } from '@bioprocess/shared/analysis';
import type { UnitOperationType } from '@bioprocess/shared/enums';
import { requireOrganizationRow, type RowLock } from '../platform/organization-rows.ts';

export const GOLDEN_BATCH_COLUMNS =
  'id, organization_id, name, unit_operation_type, reference_unit_operation_ids, parameters, alignment, band, grid_step_seconds, instrument_overrides, tolerances, created_at, updated_at';

export interface GoldenBatchRow {
  id: number;
  organization_id: number;
  name: string;
  unit_operation_type: string;
  reference_unit_operation_ids: string[];
  parameters: string[];
  alignment: Alignment;
  band: Band;
  grid_step_seconds: number | null;
  instrument_overrides: InstrumentOverride[];
  tolerances: Tolerances;
  created_at: Date;
  updated_at: Date;
}

export function toGoldenBatch(row: GoldenBatchRow): GoldenBatch {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    unit_operation_type: row.unit_operation_type as UnitOperationType,
    reference_unit_operation_ids: row.reference_unit_operation_ids.map(Number),
    parameters: row.parameters,
    alignment: row.alignment,
    band: row.band,
    grid_step_seconds: row.grid_step_seconds,
    instrument_overrides: row.instrument_overrides,
    tolerances: row.tolerances,
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

export async function requireGoldenBatch(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  id: number,
  options: { lock?: RowLock } = {},
): Promise<GoldenBatchRow> {
  return requireOrganizationRow<GoldenBatchRow>(
    db, { name: 'golden_batches', columns: GOLDEN_BATCH_COLUMNS, notFound: ANALYSIS_MESSAGES.goldenBatchNotFound }, organizationId, id, options);
}

export async function listGoldenBatches(db: pg.Pool, organizationId: number, unitOperationType: string | undefined): Promise<GoldenBatch[]> {
  const { rows } = await db.query<GoldenBatchRow>(
    `SELECT ${GOLDEN_BATCH_COLUMNS} FROM golden_batches
      WHERE organization_id = $1 AND ($2::text IS NULL OR unit_operation_type = $2) ORDER BY name, id`,
    [organizationId, unitOperationType ?? null]);
  return rows.map(toGoldenBatch);
}

export async function insertGoldenBatch(client: pg.PoolClient, organizationId: number, batch: Omit<GoldenBatch, 'id' | 'organization_id' | 'created_at' | 'updated_at'>): Promise<GoldenBatch> {
  const { rows } = await client.query<GoldenBatchRow>(
    `INSERT INTO golden_batches (organization_id, name, unit_operation_type, reference_unit_operation_ids, parameters, alignment, band, grid_step_seconds, instrument_overrides, tolerances)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${GOLDEN_BATCH_COLUMNS}`,
    [organizationId, batch.name, batch.unit_operation_type, batch.reference_unit_operation_ids, batch.parameters,
      JSON.stringify(batch.alignment), JSON.stringify(batch.band), batch.grid_step_seconds, JSON.stringify(batch.instrument_overrides), JSON.stringify(batch.tolerances)]);
  return toGoldenBatch(rows[0]!);
}

export async function updateGoldenBatch(client: pg.PoolClient, organizationId: number, id: number, batch: Omit<GoldenBatch, 'id' | 'organization_id' | 'created_at' | 'updated_at'>): Promise<GoldenBatch> {
  const { rows } = await client.query<GoldenBatchRow>(
    `UPDATE golden_batches SET name = $3, unit_operation_type = $4, reference_unit_operation_ids = $5, parameters = $6, alignment = $7,
            band = $8, grid_step_seconds = $9, instrument_overrides = $10, tolerances = $11, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${GOLDEN_BATCH_COLUMNS}`,
    [id, organizationId, batch.name, batch.unit_operation_type, batch.reference_unit_operation_ids, batch.parameters,
      JSON.stringify(batch.alignment), JSON.stringify(batch.band), batch.grid_step_seconds, JSON.stringify(batch.instrument_overrides), JSON.stringify(batch.tolerances)]);
  return toGoldenBatch(rows[0]!);
}

export async function deleteGoldenBatch(client: pg.PoolClient, organizationId: number, id: number): Promise<void> {
  await client.query('DELETE FROM golden_batches WHERE id = $1 AND organization_id = $2', [id, organizationId]);
}
