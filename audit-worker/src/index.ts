/**
 * What other packages may use of the audit-worker: starting one in-process (the api's tests drain the
 * audit outbox through it). Everything else is the worker's own.
 */
export { startAuditWorker, type AuditWorkerEnv, type AuditWorkerHandle } from './worker.ts';
export { verifyExport, type ExportVerification } from './verify-export.ts';
export { checkpointChains } from './chain.ts';
