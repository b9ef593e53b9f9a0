/**
 * Canonical JSON of the values a signed record is made of (objects, arrays, strings, finite numbers,
 * booleans, null): object keys sorted by code unit, no whitespace, numbers and strings as
 * JSON.stringify writes them. For these values that is the JSON Canonicalization Scheme (RFC 8785),
 * so the same record always serialises to the same bytes, whichever order its fields were read in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('canonicalJson: numbers must be finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
  }
  throw new Error(`canonicalJson: cannot serialise a ${typeof value}`);
}
