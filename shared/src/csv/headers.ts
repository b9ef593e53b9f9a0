/** Header sanitising: strip <>"'& and cut to 100 characters; names made unique. */
import { CSV_LIMITS } from './messages.ts';

const STRIPPED_CHARACTERS = /[<>"'&]/g;

/** One header cell: the stripping and cut, plus trimming surrounding whitespace. */
export function sanitizeHeader(name: string): string {
  return name.replace(STRIPPED_CHARACTERS, '').trim().slice(0, CSV_LIMITS.headerMaxLength);
}

/**
 * The header row as column names: sanitised, an empty name becomes 'Column {n}' (1-based position)
 * and a repeated name gets ' (2)', ' (3)'... so that every column can be selected and mapped by name.
 */
export function sanitizeHeaders(names: readonly string[]): string[] {
  const used = new Set<string>();
  const result: string[] = [];
  names.forEach((raw, index) => {
    const base = sanitizeHeader(raw) || `Column ${index + 1}`;
    let candidate = base;
    for (let copy = 2; used.has(candidate.toLowerCase()); copy += 1) {
      const suffix = ` (${copy})`;
      candidate = base.slice(0, CSV_LIMITS.headerMaxLength - suffix.length) + suffix;
    }
    used.add(candidate.toLowerCase());
    result.push(candidate);
  });
  return result;
}
