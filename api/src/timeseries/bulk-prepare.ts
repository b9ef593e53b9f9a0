/**
 * Prepares a bulk post for the queue, on a worker thread (bulk-thread.ts): parses and validates the
 * body and writes the answer and the ClickHouse rows as bytes (bulk-writer.ts).
 * Posts carry up to about a million points, so the common shape of a feed's body is read by a byte
 * scanner (bulk-scanner.ts); anything else goes through JSON.parse and validateBulkPoints, which name
 * the first bad index.
 *
 * The rule between the two paths: for every body the scanner accepts, its result is exactly what the
 * slow path gives (the same answer bytes, rows, versions and figures); the scanner gives up, rather
 * than decide, on anything it is not sure of. bulk-prepare.test.ts checks the two against each other.
 */
import { HttpError } from '../platform/http-error.ts';
import { validateBulkPoints } from './bulk.ts';
import { BulkWriter, type BulkPreparation } from './bulk-writer.ts';
import { BodyScanner, NotCommonShape } from './bulk-scanner.ts';

export type { BulkPreparation, PreparedBulk } from './bulk-writer.ts';

/**
 * Parses, validates and writes a post; a bad post answers the 400 message naming its first bad index.
 * `echo` false leaves the answer empty (the client asked for a minimal one).
 */
export function prepareBulkPost(body: Uint8Array, organizationId: number, versionSeq: number, echo = true): BulkPreparation {
  try {
    const fast = new BulkWriter(organizationId, versionSeq, body.length, echo);
    new BodyScanner(body, fast).scan();
    return fast.finish();
  } catch (error) {
    if (!(error instanceof NotCommonShape)) throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
  } catch {
    return { ok: false, error: 'Body is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || !('data' in parsed)) return { ok: false, error: 'data: must be a list of points' };
  try {
    const points = validateBulkPoints(parsed.data);
    const writer = new BulkWriter(organizationId, versionSeq, body.length, echo);
    for (const [instrumentId, ts, value, source] of points) writer.add(instrumentId, ts, { source: null, start: 0, end: 0, number: value }, source);
    return writer.finish();
  } catch (error) {
    if (error instanceof HttpError) return { ok: false, error: error.message };
    throw error;
  }
}
