/**
 * Dates and times are written one way in the console, by `date-time-format.ts` and entered through
 * `DateTimeField.tsx` and `DateField.tsx`: this scan fails when a console source writes them another way, with the
 * browser's locale (`toLocaleString` and its date and time variants, `Intl.DateTimeFormat`, which
 * gave '11/29/2026, 2:40:57 AM' in the archive list) or with the browser's own date-time field
 * (`datetime-local`, which showed '05/02/2021, 07:12:51 AM', and `date`). Counts go through `formatCount`, which
 * is why `toLocaleString` is not allowed on numbers either. Comments are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DATES = path.dirname(fileURLToPath(import.meta.url));
const CONSOLE_SOURCES = path.resolve(DATES, '..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return full === DATES ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/[^\n]*/g, '$1');

const OTHER_WAYS = [
  /\.toLocale(Date|Time)?String\s*\(/,
  /Intl\s*\.\s*DateTimeFormat/,
  /datetime-local['"]/,
  /type=["']date["']/,
];

describe('one date and time format in the console', () => {
  it('no console source outside the dates module writes or takes dates in the browser\'s locale', () => {
    const files = sourceFiles(CONSOLE_SOURCES);
    // The scan must see the console's sources, or it passes for the wrong reason.
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) => {
      const code = withoutComments(readFileSync(file, 'utf8'));
      return OTHER_WAYS.filter((pattern) => pattern.test(code)).map((pattern) => `${path.relative(CONSOLE_SOURCES, file)}: ${pattern}`);
    });
    expect(offenders).toEqual([]);
  });
});
