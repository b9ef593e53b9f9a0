/**
 * The per-minute figures of one bulk post, per instrument: readings, non-null values, their sum,
 * minimum and maximum. The api computes them while it reads the post (it holds every value then); when
 * the database shows that the post's minutes hold only its own rows, the ingest-worker stores them as
 * the post's rollups instead of aggregating the points again in ClickHouse. They wait in Redis beside
 * the post's chunks as little-endian doubles, seven per row.
 */

const FIELDS_PER_ROW = 7;

export interface MinuteFigure {
  instrumentId: number;
  /** Start of the minute, epoch ms. */
  minute: number;
  points: number;
  /** Readings with a value (not null). */
  count: number;
  sum: number;
  /** null when no reading of the minute has a value. */
  min: number | null;
  max: number | null;
}

/** Collects figures from readings in post order, each instrument's timestamps increasing. */
export class MinuteFiguresBuilder {
  private readonly fields: number[] = [];

  /** Appends a finished minute. */
  add(instrumentId: number, minute: number, points: number, count: number, sum: number, min: number, max: number): void {
    // min and max are +-Infinity when the minute had no value: stored as NaN, read back as null.
    this.fields.push(instrumentId, minute, points, count, sum, count > 0 ? min : Number.NaN, count > 0 ? max : Number.NaN);
  }

  encode(): Uint8Array {
    const bytes = new Uint8Array(this.fields.length * 8);
    const view = new DataView(bytes.buffer);
    for (let index = 0; index < this.fields.length; index += 1) view.setFloat64(index * 8, this.fields[index]!, true);
    return bytes;
  }
}

/** NaN (a minute without a value) read back as null. */
const nullable = (value: number) => (Number.isNaN(value) ? null : value);

export function decodeMinuteFigures(bytes: Uint8Array): MinuteFigure[] {
  if (bytes.length % (FIELDS_PER_ROW * 8) !== 0) throw new Error(`minute figures of ${bytes.length} bytes are not whole rows`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const figures: MinuteFigure[] = [];
  // No closures in the loop: the TypeScript loader names every function it creates (a defineProperty
  // per row), which cost more than the decoding itself.
  for (let offset = 0; offset < bytes.length; offset += FIELDS_PER_ROW * 8) {
    figures.push({
      instrumentId: view.getFloat64(offset, true),
      minute: view.getFloat64(offset + 8, true),
      points: view.getFloat64(offset + 16, true),
      count: view.getFloat64(offset + 24, true),
      sum: view.getFloat64(offset + 32, true),
      min: nullable(view.getFloat64(offset + 40, true)),
      max: nullable(view.getFloat64(offset + 48, true)),
    });
  }
  return figures;
}
