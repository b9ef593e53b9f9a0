/**
 * The one guard of run review: while a run is In review, Approved or Released, every route that
 * changes what the run's signatures cover (its metadata, unit operations, samples, CSV uploads and
 * range deletions of its readings) calls one of these and answers 409 naming the state. Called inside
 * the change's transaction, the guard takes a share lock on the run row, and a review transition
 * takes an update lock on it, so a change and a submission never pass each other. Nothing found:
 * the guard is silent and the route answers its own 404.
 */
import { equipmentIdsOfInstruments } from '@bioprocess/shared/server/instruments-repository';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { runIdOfSample, runIdOfUnitOperation, runIdsOfUnitOperationsOnEquipmentDuring } from '@bioprocess/shared/server/unit-operations-repository';
import { LOCKED_REVIEW_STATES, REVIEW_STATE_LABELS, type ReviewState } from '@bioprocess/shared/run-review';
import { conflict } from '../platform/http-error.ts';

export function runLockedMessage(runName: string, state: ReviewState): string {
  return `Run "${runName}" is ${REVIEW_STATE_LABELS[state]}: it cannot be changed until it is reopened with a reason`;
}

/**
 * The lock and the check, in one statement, on runs named by id: the repositories look them up just
 * before. A lookup inside this statement would read no later (its snapshot is taken when the statement
 * starts, before any wait for the lock), so the same rows are locked.
 */
async function refuseLockedRuns(db: Queryable, organizationId: number, runIds: readonly number[]): Promise<void> {
  if (runIds.length === 0) return;
  const { rows } = await db.query<{ name: string; state: ReviewState }>(
    `SELECT r.name, coalesce(rr.state, 'draft') AS state
       FROM runs r LEFT JOIN run_reviews rr ON rr.run_id = r.id
      WHERE r.organization_id = $1 AND r.id = ANY($2::bigint[])
      ORDER BY r.id
        FOR SHARE OF r`,
    [organizationId, [...runIds]],
  );
  const locked = rows.find((row) => LOCKED_REVIEW_STATES.includes(row.state));
  if (locked) throw conflict(runLockedMessage(locked.name, locked.state));
}

const runIdsOf = (runId: number | null) => (runId === null ? [] : [runId]);

export function refuseLockedRun(db: Queryable, organizationId: number, runId: number): Promise<void> {
  return refuseLockedRuns(db, organizationId, [runId]);
}

export async function refuseLockedUnitOperation(db: Queryable, organizationId: number, unitOperationId: number): Promise<void> {
  await refuseLockedRuns(db, organizationId, runIdsOf(await runIdOfUnitOperation(db, organizationId, unitOperationId)));
}

export async function refuseLockedSample(db: Queryable, organizationId: number, sampleRowId: number): Promise<void> {
  await refuseLockedRuns(db, organizationId, runIdsOf(await runIdOfSample(db, organizationId, sampleRowId)));
}

/**
 * A range deletion of instruments' readings: refused when the range overlaps the window of a unit
 * operation of a locked run on the instruments' equipment (an open window runs until now).
 */
export async function refuseLockedInstrumentRange(
  db: Queryable, organizationId: number, instrumentIds: readonly number[], startMs: number, endMs: number,
): Promise<void> {
  const equipmentIds = await equipmentIdsOfInstruments(db, organizationId, instrumentIds);
  if (equipmentIds.length === 0) return;
  await refuseLockedRuns(db, organizationId, await runIdsOfUnitOperationsOnEquipmentDuring(db, organizationId, equipmentIds, startMs, endMs));
}
