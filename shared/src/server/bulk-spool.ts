/**
 * The data of a large bulk post, spooled to files beside the CSV uploads (UPLOAD_DIR/bulk/<job id>/):
 * its ClickHouse rows per chunk, fsynced with their folder entries before the
 * job row is committed, so an answered post survives a crash of the machine. Small posts keep their
 * data with their job rows in PostgreSQL (many share one statement). A large post's megabytes there
 * cost TOAST work (hundreds of chunk rows per post, written, deleted and vacuumed again) that, measured,
 * took PostgreSQL as much CPU as the post's whole insert took ClickHouse.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { syncToDisk } from './sync-to-disk.ts';

const JOB_FOLDER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function bulkSpoolFolder(uploadDir: string): string {
  return path.resolve(uploadDir, 'bulk');
}

function jobFolder(uploadDir: string, jobId: string): string {
  if (!JOB_FOLDER.test(jobId)) throw new Error(`not a job id: ${jobId}`);
  return path.join(bulkSpoolFolder(uploadDir), jobId);
}

const partFile = (uploadDir: string, jobId: string, part: number) => path.join(jobFolder(uploadDir, jobId), `part${part}`);

/** Writes the job's parts and makes them durable (each file, the job's folder and its entry). */
export async function spoolBulkData(uploadDir: string, jobId: string, parts: ReadonlyArray<{ part: number; bytes: Uint8Array }>): Promise<void> {
  const folder = jobFolder(uploadDir, jobId);
  await mkdir(folder, { recursive: true });
  await Promise.all(parts.map(async ({ part, bytes }) => {
    const file = partFile(uploadDir, jobId, part);
    await writeFile(file, bytes);
    await syncToDisk(file);
  }));
  await syncToDisk(folder, bulkSpoolFolder(uploadDir));
}

/** A spooled part, or null when it is not there. */
export async function readSpooledPart(uploadDir: string, jobId: string, part: number): Promise<Buffer | null> {
  try {
    return await readFile(partFile(uploadDir, jobId, part));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return null;
    throw error;
  }
}

/** Removes the spooled data of these jobs (none is an error). */
export async function removeSpooledData(uploadDir: string, jobIds: readonly string[]): Promise<void> {
  await Promise.all(jobIds.map((jobId) => rm(jobFolder(uploadDir, jobId), { recursive: true, force: true })));
}

/** The ids of the jobs that have spooled data. */
export async function spooledJobIds(uploadDir: string): Promise<string[]> {
  try {
    return (await readdir(bulkSpoolFolder(uploadDir))).filter((name) => JOB_FOLDER.test(name));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return [];
    throw error;
  }
}
