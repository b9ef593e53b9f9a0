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
 *
 * Linear in the header: each suffixed candidate is `stem (k)` where the stem is the name cut to leave
 * room for the suffix, so candidates are grouped by (suffix length, stem) and each group remembers the
 * lowest k it has not yet found taken. Names only ever become taken, so no group tries a k twice and a
 * header of n copies of one name costs n tries, not n squared.
 */
export function sanitizeHeaders(names: readonly string[], work?: { candidates: number }): string[] {
  const used = new Set<string>();
  const nextCopy = new Map<string, number>();
  const result: string[] = [];
  names.forEach((raw, index) => {
    const base = sanitizeHeader(raw) || `Column ${index + 1}`;
    let candidate = base;
    let copy = 2;
    while (used.has(candidate.toLowerCase())) {
      const suffixLength = String(copy).length + 3;
      const stem = base.slice(0, CSV_LIMITS.headerMaxLength - suffixLength);
      const group = `${suffixLength}:${stem.toLowerCase()}`;
      copy = Math.max(copy, nextCopy.get(group) ?? 2);
      // The group's counter may have moved into the next suffix length: recompute the stem there.
      if (String(copy).length + 3 !== suffixLength) continue;
      candidate = `${stem} (${copy})`;
      if (work) work.candidates += 1;
      copy += 1;
      nextCopy.set(group, copy);
    }
    used.add(candidate.toLowerCase());
    result.push(candidate);
  });
  return result;
}
