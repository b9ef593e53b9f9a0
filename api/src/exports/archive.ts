/**
 * The whole-organisation archive (admins): one ZIP, streamed, holding every record kind as CSV,
 * every unit operation's time series as CSV long, every sample (one row per result), and a `manifest.json` written last: what is inside,
 * row counts, SHA-256 checksums and byte sizes, the columns (and their types) of each file, and the
 * product version. Checksums are taken while the files stream into the archive, one file at a time,
 * so the archive never holds a file in memory.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { PassThrough, Readable, Transform } from 'node:stream';
import archiver from 'archiver';
import { CSV_LONG_COLUMNS, RECORD_EXPORT_ENTITIES } from '@bioprocess/shared/exports';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { csvLong, type ExportTally } from './csv-formats.ts';
import { recordChunks, recordColumnNames } from './records.ts';
import { resolveExportScope } from './scope.ts';
import { listUnitOperationIdsWithReadings } from '@bioprocess/shared/server/unit-operations-repository';
import { SAMPLE_LONG_COLUMNS } from '@bioprocess/shared/samples';
import { listUnitOperationIdsWithSamples } from '../samples/repository.ts';
import { loadSamplesOf, sampleCsv } from './samples.ts';

const PRODUCT_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type ColumnType = 'integer' | 'number' | 'text' | 'timestamp';

/** A record column's type, from its name (ids, times, figures; the rest is text). */
function recordColumnType(name: string): ColumnType {
  if (name === 'id' || name.endsWith('_id') || name === 'status') return 'integer';
  if (name.endsWith('_time') || name.endsWith('_at') || name === 'timestamp') return 'timestamp';
  if (name.startsWith('scale_')) return 'number';
  return 'text';
}

const TIME_SERIES_COLUMN_TYPES: Record<(typeof CSV_LONG_COLUMNS)[number], ColumnType> = {
  timestamp: 'timestamp', elapsed_s: 'number', instrument: 'text', instrument_id: 'integer', unit: 'text', value: 'number',
  quality: 'integer', historical: 'text',
};

const SAMPLE_COLUMN_TYPES: Record<(typeof SAMPLE_LONG_COLUMNS)[number], ColumnType> = {
  unit_operation_id: 'integer', sample_id: 'text', drawn_at: 'timestamp', elapsed_s: 'number', analyte: 'text', value: 'number',
  flag: 'text', limit: 'number', unit: 'text', method: 'text', measured_at: 'timestamp', notes: 'text',
};

/** Every sample of the organisation, one row per result (the long sample file), after the time series. */
export const ARCHIVE_SAMPLES_PATH = 'samples/samples.csv';

export interface ManifestFile {
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
  schema: { format: 'csv'; columns: Array<{ name: string; type: ColumnType }> };
}

export interface ArchiveManifest {
  product: 'bioprocess-platform';
  product_version: string;
  organization_id: number;
  exported_at: string;
  exported_by: string;
  files: ManifestFile[];
}

export interface ArchiveInput {
  pg: Pool;
  clickhouse: ClickHouseClient;
  organizationId: number;
  exportedBy: string;
  /** Told after each file (an archive job's progress). */
  onProgress?: (progress: { files_done: number; files_total: number; points_done: number }) => void;
}

/** Counts and hashes what passes through. */
function measuring(): { stream: Transform; bytes: () => number; digest: () => string } {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes, digest: () => hash.digest('hex') };
}

async function addFile(archive: archiver.Archiver, path: string, source: AsyncGenerator<string | Buffer>, signal: AbortSignal): Promise<{ bytes: number; sha256: string }> {
  signal.throwIfAborted();
  const measured = measuring();
  const text = Readable.from(source, { objectMode: false });
  const content = text.pipe(measured.stream);
  archive.append(content, { name: path });
  try {
    await once(measured.stream, 'end', { signal });
  } catch (error) {
    // Ends the source too: its database cursor or query is closed.
    text.destroy();
    throw error;
  }
  return { bytes: measured.bytes(), sha256: measured.digest() };
}

async function writeArchive(archive: archiver.Archiver, input: ArchiveInput, manifest: ArchiveManifest, signal: AbortSignal): Promise<void> {
  const unitOperationIds = await listUnitOperationIdsWithReadings(input.pg, input.organizationId);
  const filesTotal = RECORD_EXPORT_ENTITIES.length + unitOperationIds.length + 1;
  let points = 0;
  const fileDone = () => input.onProgress?.({ files_done: manifest.files.length, files_total: filesTotal, points_done: points });
  for (const entity of RECORD_EXPORT_ENTITIES) {
    const tally = { rows: 0 };
    const path = `records/${entity}.csv`;
    const file = await addFile(archive, path, recordChunks(input.pg, input.organizationId, entity, 'csv', tally), signal);
    manifest.files.push({ path, rows: tally.rows, ...file, schema: { format: 'csv', columns: recordColumnNames(entity).map((name) => ({ name, type: recordColumnType(name) })) } });
    fileDone();
  }
  for (const id of unitOperationIds) {
    const scope = await resolveExportScope(input.pg, input.organizationId, { unit_operation_id: Number(id), format: 'csv-long', elapsed: 'true' }, Date.now());
    const tally: ExportTally = { rows: 0, points: 0 };
    const path = `time-series/unit-operation-${id}.csv`;
    const file = await addFile(archive, path, csvLong({ clickhouse: input.clickhouse, organizationId: input.organizationId, scope, bucketMs: null, tally }), signal);
    manifest.files.push({ path, rows: tally.rows, ...file, schema: { format: 'csv', columns: CSV_LONG_COLUMNS.map((name) => ({ name, type: TIME_SERIES_COLUMN_TYPES[name] })) } });
    points += tally.points;
    fileDone();
  }
  const samples = await loadSamplesOf(input.pg, input.organizationId, { ids: await listUnitOperationIdsWithSamples(input.pg, input.organizationId) });
  const sampleTally = { rows: 0 };
  const sampleFile = await addFile(archive, ARCHIVE_SAMPLES_PATH, sampleCsv(samples, 'csv-long', sampleTally), signal);
  manifest.files.push({
    path: ARCHIVE_SAMPLES_PATH, rows: sampleTally.rows, ...sampleFile,
    schema: { format: 'csv', columns: SAMPLE_LONG_COLUMNS.map((name) => ({ name, type: SAMPLE_COLUMN_TYPES[name] })) },
  });
  fileDone();
  archive.append(`${JSON.stringify(manifest, null, 2)}\n`, { name: 'manifest.json' });
  await archive.finalize();
}

/** The archive as a stream; `onEnd` learns the manifest, or the error that cut the archive short. */
export function organizationArchive(input: ArchiveInput, onEnd: (manifest: ArchiveManifest, error: unknown) => void): Readable {
  const output = new PassThrough();
  const archive = archiver('zip', { zlib: { level: 6 } });
  const manifest: ArchiveManifest = {
    product: 'bioprocess-platform', product_version: PRODUCT_VERSION, organization_id: input.organizationId,
    exported_at: new Date().toISOString(), exported_by: input.exportedBy, files: [],
  };
  archive.on('error', (error) => output.destroy(error));
  archive.pipe(output);
  const aborted = new AbortController();
  output.on('close', () => {
    // The client went away: stop reading the databases.
    if (!output.writableFinished) {
      aborted.abort();
      archive.abort();
    }
  });
  writeArchive(archive, input, manifest, aborted.signal).then(
    async () => {
      if (!output.writableFinished && !output.destroyed) await once(output, 'finish').catch(() => undefined);
      onEnd(manifest, output.writableFinished ? null : new Error('the client went away'));
    },
    (error: unknown) => {
      onEnd(manifest, error);
      output.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return output;
}
