/**
 * The real-export corpus is evidence only while it is byte for byte what its source published: a
 * line-ending conversion, a re-save or a hand edit would let reader tests pass on a file no instrument
 * wrote. Each file listed in real-exports.ts must exist and hash to the SHA-256 its SOURCES.md states.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  REAL_EXPORT_NAMES,
  realExportPath,
  realExportSourcesPath,
  type RealExportName,
} from '../test-data/real-exports.ts';

/** The `**SHA-256:**` line of the file's own section (a heading naming the file in backticks). */
function statedSha256(name: RealExportName): string | null {
  const lines = readFileSync(realExportSourcesPath(name), 'utf8').split('\n');
  const start = lines.findIndex((line) => /^##\s/.test(line) && line.includes(`\`${name}\``));
  if (start < 0) return null;
  for (const line of lines.slice(start + 1)) {
    if (/^##\s/.test(line)) return null;
    const match = /^- \*\*SHA-256:\*\* `([0-9a-f]{64})`/.exec(line);
    if (match) return match[1]!;
  }
  return null;
}

describe('real instrument exports', () => {
  it('lists the corpus: the four earlier files and at least ten more', () => {
    expect(REAL_EXPORT_NAMES.length).toBeGreaterThanOrEqual(14);
    expect(new Set(REAL_EXPORT_NAMES).size).toBe(REAL_EXPORT_NAMES.length);
  });

  it.each(REAL_EXPORT_NAMES)('%s is in the repository, byte for byte as SOURCES.md states', (name) => {
    const file = realExportPath(name);
    expect(existsSync(file)).toBe(true);
    const stated = statedSha256(name);
    expect(stated, `SOURCES.md beside ${name} has no SHA-256 line in its section`).not.toBeNull();
    expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(stated);
  });
});
