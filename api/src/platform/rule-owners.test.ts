/**
 * Each rule over stored data has one owner, and these scans fail when a second copy appears: the
 * read rule of points (deduplication by version, FINAL, the points tables) is the api's
 * timeseries/points-read.ts's, and only the ingest-worker writes points and rollups; the SQL of the
 * instruments, unit_operations and ingest_jobs tables is their repository's in shared/src/server,
 * for the api, the ingest-worker and shared alike, with no file excepted: a feature that reads across
 * a run's records (review, signing, alerts) asks each repository for its part. Comments are left out:
 * prose may name a rule, code may not restate it.
 *
 * Not caught, on purpose: statements built from a table name held as data, which are the same for
 * every table (the organisation-scoped lookup by id in organization-rows.ts, the per-entity record
 * export in exports/records.ts); tests, whose fixtures write rows directly.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PACKAGES = ['api/src', 'ingest-worker/src', 'shared/src'] as const;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|mjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/[^\n]*/g, '$1');

/** Every source file of the three packages, by its path from the repository's root. */
const CODE = PACKAGES.flatMap((folder) => sourceFiles(path.join(ROOT, folder)))
  .map((file) => ({ file: path.relative(ROOT, file).split(path.sep).join('/'), code: withoutComments(readFileSync(file, 'utf8')) }));

/** `file: pattern` for each pattern found in code outside the owners (in `within` only, when given). */
function outside(owners: readonly string[], patterns: readonly RegExp[], within: readonly string[] = PACKAGES): string[] {
  return CODE.filter(({ file }) => !owners.includes(file) && within.some((folder) => file.startsWith(`${folder}/`)))
    .flatMap(({ file, code }) => patterns.filter((pattern) => pattern.test(code)).map((pattern) => `${file}: ${pattern}`));
}

const codeOf = (file: string) => CODE.find((entry) => entry.file === file)!.code;

const INSTRUMENTS_REPOSITORY = 'shared/src/server/instruments-repository.ts';
const UNIT_OPERATIONS_REPOSITORY = 'shared/src/server/unit-operations-repository.ts';
const INGEST_JOBS_REPOSITORY = 'shared/src/server/ingest-jobs.ts';

describe('one owner per rule', () => {
  it('scans the three packages', () => {
    for (const folder of PACKAGES) expect(CODE.some(({ file }) => file.startsWith(`${folder}/`)), folder).toBe(true);
    for (const owner of [INSTRUMENTS_REPOSITORY, UNIT_OPERATIONS_REPOSITORY, INGEST_JOBS_REPOSITORY]) expect(codeOf(owner)).toBeTruthy();
  });

  it('keeps the deduplication of points and rollups, FINAL and the points tables in timeseries/points-read.ts', () => {
    expect(outside(['api/src/timeseries/points-read.ts'], [/argMax\s*\(/, /\bFINAL\b/, /\bpoints_rollup_1[mh]\b/, /\bFROM\s+points\b/], ['api/src'])).toEqual([]);
  });

  it('leaves the writes of points and rollups to the ingest-worker: no INSERT into them from the api', () => {
    expect(outside([], [/\bINSERT\s+INTO\s+points(_rollup\w*)?\b/i, /\binsert\s*\(\s*\{[^}]*\btable\s*:\s*['"`]points/], ['api/src'])).toEqual([]);
  });

  it('keeps the SQL of the instruments table in its repository', () => {
    expect(outside([INSTRUMENTS_REPOSITORY], [/\b(FROM|JOIN|UPDATE|INTO|USING)\s+instruments\b/])).toEqual([]);
  });

  it('keeps the SQL of the unit_operations table in its repository (comments join it to show where they sit)', () => {
    expect(outside([UNIT_OPERATIONS_REPOSITORY, INGEST_JOBS_REPOSITORY], [/\b(FROM|UPDATE|INTO|USING)\s+unit_operations\b/])).toEqual([]);
    expect(outside([UNIT_OPERATIONS_REPOSITORY, 'api/src/comments/repository.ts'], [/\bJOIN\s+unit_operations\b/])).toEqual([]);
    // failIngestJob removes a failed upload's unit operation in the statement that fails the job; nothing else there.
    expect(codeOf(INGEST_JOBS_REPOSITORY).match(/\b\w+\s+(FROM|JOIN|UPDATE|INTO|USING)\s+unit_operations\b/g)).toEqual(['DELETE FROM unit_operations']);
  });

  it('keeps the SQL of the ingest_jobs and ingest_job_data tables in their repository', () => {
    expect(outside([INGEST_JOBS_REPOSITORY], [/\b(FROM|JOIN|UPDATE|INTO|USING)\s+(ingest_jobs|ingest_job_data)\b/])).toEqual([]);
  });
});
