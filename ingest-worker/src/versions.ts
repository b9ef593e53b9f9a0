/** The row version rule lives in shared/src/ingest/versions.ts; this path stays for existing imports. */
export * from '@bioprocess/shared/ingest/versions';
