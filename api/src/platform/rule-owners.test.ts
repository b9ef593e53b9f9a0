/**
 * Each rule over stored data has one owner in the api, and these scans fail when a second copy
 * appears: the read rule of points (deduplication by version, FINAL, the points tables) is
 * timeseries/points-read.ts's, and the SQL of the instruments and unit_operations tables is their
 * repositories'. Comments are left out: prose may name a rule, code may not restate it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const API_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|mjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/[^\n]*/g, '$1');

const CODE = sourceFiles(API_SRC).map((file) => ({ file: path.relative(API_SRC, file), code: withoutComments(readFileSync(file, 'utf8')) }));

/** `file: pattern` for each pattern found in code outside the owners. */
function outside(owners: readonly string[], patterns: readonly RegExp[]): string[] {
  return CODE.filter(({ file }) => !owners.includes(file))
    .flatMap(({ file, code }) => patterns.filter((pattern) => pattern.test(code)).map((pattern) => `${file}: ${pattern}`));
}

describe('one owner per rule', () => {
  it('keeps the deduplication of points and rollups, FINAL and the points tables in timeseries/points-read.ts', () => {
    expect(outside(['timeseries/points-read.ts'], [/argMax\s*\(/, /\bFINAL\b/, /\bpoints_rollup_1[mh]\b/, /\bFROM\s+points\b/])).toEqual([]);
  });

  it('keeps the SQL of the instruments table in instruments/repository.ts', () => {
    expect(outside(['instruments/repository.ts'], [/\b(FROM|JOIN|UPDATE|INTO)\s+instruments\b/])).toEqual([]);
  });

  it('keeps the SQL of the unit_operations table in unit-operations/repository.ts (comments join it to show where they sit)', () => {
    expect(outside(['unit-operations/repository.ts'], [/\b(FROM|UPDATE|INTO)\s+unit_operations\b/])).toEqual([]);
    expect(outside(['unit-operations/repository.ts', 'comments/repository.ts'], [/\bJOIN\s+unit_operations\b/])).toEqual([]);
  });
});
