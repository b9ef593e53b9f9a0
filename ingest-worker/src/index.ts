/**
 * What other packages may use of the ingest-worker: starting one in-process (the api's tests), and
 * the ClickHouse writes that the bench and test fixtures need for data loaded straight into
 * ClickHouse (points, tombstones, their rollups). Everything else is the worker's own.
 */
export { startIngestWorker, type IngestWorker } from './worker.ts';
export { insertPoints } from './points-store.ts';
export { writeTombstones } from './deletions.ts';
export { recomputeRollups } from './rollups/recompute.ts';
