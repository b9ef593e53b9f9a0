/**
 * The one guard of run review: while a run is In review, Approved or Released, every route that
 * changes what the run's signatures cover (its metadata, unit operations, samples, CSV uploads and
 * range deletions of its readings) calls one of these and answers 409 naming the state. Called inside
 * the change's transaction, the guard takes a share lock on the run row, and a review transition
 * takes an update lock on it, so a change and a submission never pass each other. Nothing found:
 * the guard is silent and the route answers its own 404.
 */
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { LOCKED_REVIEW_STATES, REVIEW_STATE_LABELS, type ReviewState } from '@bioprocess/shared/run-review';
import { conflict } from '../platform/http-error.ts';

export function runLockedMessage(runName: string, state: ReviewState): string {
  return `Run "${runName}" is ${REVIEW_STATE_LABELS[state]}: it cannot be changed until it is reopened with a reason`;
}

async function refuseLockedRuns(db: Queryable, organizationId: number, where: string, params: unknown[]): Promise<void> {
  const { rows } = await db.query<{ name: string; state: ReviewState }>(
    `SELECT r.name, coalesce(rr.state, 'draft') AS state
       FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id
      WHERE r.organization_id = $1 AND r.id IN (${where})
      ORDER BY r.id
        FOR SHARE OF r`,
    [organizationId, ...params],
  );
  const locked = rows.find((row) => LOCKED_REVIEW_STATES.includes(row.state));
  if (locked) throw conflict(runLockedMessage(locked.name, locked.state));
}

export function refuseLockedRun(db: Queryable, organizationId: number, runId: number): Promise<void> {
  return refuseLockedRuns(db, organizationId, '$2::bigint', [runId]);
}

export function refuseLockedUnitOperation(db: Queryable, organizationId: number, unitOperationId: number): Promise<void> {
  return refuseLockedRuns(db, organizationId, 'SELECT run_id FROM unit_operations WHERE id = $2 AND organization_id = $1', [unitOperationId]);
}

export function refuseLockedSample(db: Queryable, organizationId: number, sampleRowId: number): Promise<void> {
  return refuseLockedRuns(db, organizationId,
    `SELECT u.run_id FROM samples s JOIN unit_operations u ON u.id = s.unit_operation_id
      WHERE s.id = $2 AND s.organization_id = $1`, [sampleRowId]);
}

/**
 * A range deletion of instruments' readings: refused when the range overlaps the window of a unit
 * operation of a locked run on the instruments' equipment (an open window runs until now).
 */
export function refuseLockedInstrumentRange(
  db: Queryable, organizationId: number, instrumentIds: readonly number[], startMs: number, endMs: number,
): Promise<void> {
  return refuseLockedRuns(db, organizationId,
    `SELECT u.run_id FROM unit_operations u
      WHERE u.organization_id = $1 AND u.start_time IS NOT NULL
        AND u.equipment_id IN (SELECT equipment_id FROM instruments WHERE organization_id = $1 AND id = ANY($2::bigint[]))
        AND (extract(epoch FROM u.start_time) * 1000)::bigint <= $4
        AND (u.end_time IS NULL OR (extract(epoch FROM u.end_time) * 1000)::bigint >= $3)`,
    [instrumentIds, startMs, endMs]);
}
