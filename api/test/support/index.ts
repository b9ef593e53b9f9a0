/**
 * The test-only entry of the api (`@bioprocess/api/test-support`): what the other packages' integration
 * tests need of the product under test. A per-file context (fresh PostgreSQL and ClickHouse databases,
 * migrated, a private queue prefix, the app built without listening), the shared fixtures
 * (organisation, users, plant), an in-process ingest-worker with job polling and reads, and the
 * product's processes spawned for real, a TCP proxy that cuts a service off, and the api's side of the
 * audit trail (recording an event, the event the relay queues). The api's own tests import the same
 * modules directly.
 */
export { createTestContext, dropTestDatabases, testEnv, type TestContext, type TestContextOptions, type TestUser } from './test-context.ts';
export { addInstruments, createApiKey, createOrganisationWithUsers, createPlant, createUnitOperation, type Organisation, type Plant } from './fixtures.ts';
export { multipartBody, readSeries, realExportPath, REPO_ROOT, startWorker, waitForJobState, type JobStatus, type Reading, type RealExportName } from './ingest.ts';
export * from './pipeline.ts';
export { OutageProxy } from './outage-proxy.ts';
export { queuedEventFor } from './audit-drain.ts';
export { recordAudit } from '../../src/audit/record.ts';
export { awaitOwedRollups } from '../../src/timeseries/rollup-backlog.ts';
export { clearQueueEvents, logJobStates, mostAtOnce, queueEvents, runsOfJobs, takenInOrder, type QueueEvent, type Run } from './job-order.ts';
