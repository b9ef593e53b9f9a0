/**
 * Row versions, the one rule for the api (which writes bulk rows, shared/src/point-rows.ts) and the
 * ingest-worker (CSV rows, tombstones, rollup checks). Every accepted request gets `version_seq` from a PostgreSQL sequence when the api
 * accepts it. ClickHouse versions are `version_seq * 10^10 + suffix`: tombstones written on behalf of
 * the request use suffix 0, its points use 1 + their index in the post or file, so
 *   - a later-accepted request beats an earlier one whatever order the jobs run in;
 *   - a replacing upload's own tombstones sit just below its own points;
 *   - within one request, a later row for the same key wins, deterministically on every retry.
 * Versions are built as decimal strings: the numbers exceed 2^53.
 */
export const VERSION_SUFFIX_DIGITS = 10;
export const MAX_ROWS_PER_VERSION = 10 ** VERSION_SUFFIX_DIGITS - 1;
/** 10^VERSION_SUFFIX_DIGITS as a bigint: what writers of binary rows multiply `version_seq` by. */
export const VERSION_SEQ_FACTOR = 10n ** BigInt(VERSION_SUFFIX_DIGITS);

export function tombstoneVersion(versionSeq: number): string {
  return `${versionSeq}${'0'.repeat(VERSION_SUFFIX_DIGITS)}`;
}

/** The version of the row at `index` (0-based) of a request. */
export function pointVersion(versionSeq: number, index: number): string {
  return `${versionSeq}${String(index + 1).padStart(VERSION_SUFFIX_DIGITS, '0')}`;
}

/**
 * The version of the row at `index` when the first row of a key must win (an upload that keeps the
 * first of its duplicates): suffixes fall as the index grows, and stay above the tombstones' 0.
 */
export function firstWinsPointVersion(versionSeq: number, index: number): string {
  return pointVersion(versionSeq, MAX_ROWS_PER_VERSION - 1 - index);
}

/** The row index a version of this request stands for, under either ordering. */
export function rowIndexOfVersion(version: bigint, firstWins: boolean): number {
  const suffix = Number(version % VERSION_SEQ_FACTOR);
  return firstWins ? MAX_ROWS_PER_VERSION - suffix : suffix - 1;
}

/** The first version above every row of the request. */
export function nextRequestVersion(versionSeq: number): string {
  return tombstoneVersion(versionSeq + 1);
}
