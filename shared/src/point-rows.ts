/**
 * Rows of the ClickHouse `points` table in its RowBinary format: what the api writes for a bulk post's
 * chunks and the ingest-worker inserts as they are. Binary rather than text because ClickHouse 18.16
 * reads about one decimal in 160 to a neighbouring double (a posted 1.2600393 would read back as
 * 1.2600392999999999); a double written here is stored bit for bit.
 *
 * A row, little-endian, in the order of POINT_ROW_COLUMNS (RowBinary follows the INSERT's column list,
 * not the table's): organization_id UInt64, instrument_id UInt64, ts Int64, value Nullable(Float64)
 * (a byte 1 for null, else 0 and the double), version UInt64, is_deleted UInt8, then what the source
 * said about the reading: ts_micros UInt16 (microseconds within the millisecond), quality
 * Nullable(UInt32) (the source's code) and historical UInt8.
 *
 * Rows recorded by apis from before the source's details (bulk jobs still queued across a deploy) end
 * at is_deleted: their request names the layout (`rows_format`), and they are inserted with the
 * columns they have (POINT_ROW_LAYOUTS), the others taking their defaults.
 */
import { VERSION_SEQ_FACTOR } from './ingest/versions.ts';

/** The columns of a legacy row (rows_format 'RowBinary' or 'TabSeparated'), in order. */
export const LEGACY_POINT_ROW_COLUMNS = ['organization_id', 'instrument_id', 'ts', 'value', 'version', 'is_deleted'] as const;
/** The columns of a row, in order (the INSERT names them). */
export const POINT_ROW_COLUMNS = [...LEGACY_POINT_ROW_COLUMNS, 'ts_micros', 'quality', 'historical'] as const;

/**
 * How a bulk post's stored rows are written (`rows_format` of its record): the current layout, or one
 * of older apis'. Each names the ClickHouse format and the columns of its rows.
 */
export const POINT_ROW_LAYOUTS = {
  RowBinaryWithSource: { clickhouseFormat: 'RowBinary', columns: POINT_ROW_COLUMNS },
  RowBinary: { clickhouseFormat: 'RowBinary', columns: LEGACY_POINT_ROW_COLUMNS },
  TabSeparated: { clickhouseFormat: 'TabSeparated', columns: LEGACY_POINT_ROW_COLUMNS },
} as const;
export type PointRowsLayout = keyof typeof POINT_ROW_LAYOUTS;
export const POINT_ROWS_LAYOUT_NAMES = Object.keys(POINT_ROW_LAYOUTS) as [PointRowsLayout, ...PointRowsLayout[]];

/** The layout this version writes. */
export const POINT_ROWS_FORMAT = 'RowBinaryWithSource' satisfies PointRowsLayout;
/** The largest row: a non-null value and a quality code. */
export const MAX_POINT_ROW_BYTES = 50;
/** Bytes after is_deleted in the current layout, without and with a quality code. */
const SOURCE_BYTES_NO_QUALITY = 4;
const SOURCE_BYTES_WITH_QUALITY = 8;

/** What a source said about a reading beyond its millisecond and value. */
export interface ReadingSource {
  /** Microseconds within the millisecond, 0-999. */
  micros: number;
  /** The source's quality code (UInt32), null when it gave none. */
  quality: number | null;
  historical: boolean;
}

export const NO_SOURCE_DETAILS: ReadingSource = Object.freeze({ micros: 0, quality: null, historical: false });

const TWO_32 = 4_294_967_296;

/**
 * A safe integer as a little-endian Int64 (also UInt64 when not negative), written as two 32-bit
 * halves: a BigInt per field costs far more, once per point. The high half is floor(value / 2^32),
 * negative before 1970.
 */
function setInt64(view: DataView, offset: number, value: number): void {
  const high = Math.floor(value / TWO_32);
  view.setUint32(offset, value - high * TWO_32, true);
  view.setInt32(offset + 4, high, true);
}

/** A UInt64 beyond 2^53 (a version) as its low and high 32-bit halves, for writing row after row. */
function uint64Halves(value: bigint): [low: number, high: number] {
  return [Number(value % BigInt(TWO_32)), Number(value / BigInt(TWO_32))];
}

/** A growable buffer of point rows, written one row at a time. */
export class PointRowWriter {
  bytes: Uint8Array;
  length = 0;
  private view: DataView;
  private readonly organizationLow: number;
  private readonly organizationHigh: number;
  private readonly versionBaseLow: number;
  private readonly versionBaseHigh: number;

  constructor(organizationId: number, versionSeq: number, initialBytes: number) {
    this.bytes = new Uint8Array(Math.max(1024, Math.ceil(initialBytes)));
    this.view = new DataView(this.bytes.buffer);
    [this.organizationLow, this.organizationHigh] = uint64Halves(BigInt(organizationId));
    [this.versionBaseLow, this.versionBaseHigh] = uint64Halves(BigInt(versionSeq) * VERSION_SEQ_FACTOR);
  }

  /**
   * Appends a reading with version `versionSeq * 10^10 + suffix` (suffix below 10^10: the point's
   * 1-based index in its request).
   */
  point(instrumentId: number, ts: number, value: number | null, suffix: number, source: ReadingSource = NO_SOURCE_DETAILS): void {
    if (this.length + MAX_POINT_ROW_BYTES > this.bytes.length) this.grow();
    const view = this.view;
    let offset = this.length;
    view.setUint32(offset, this.organizationLow, true);
    view.setUint32(offset + 4, this.organizationHigh, true);
    setInt64(view, offset + 8, instrumentId);
    setInt64(view, offset + 16, ts);
    offset += 24;
    if (value === null) {
      this.bytes[offset++] = 1;
    } else {
      this.bytes[offset++] = 0;
      view.setFloat64(offset, value, true);
      offset += 8;
    }
    const low = this.versionBaseLow + suffix;
    const carry = Math.floor(low / TWO_32);
    view.setUint32(offset, low - carry * TWO_32, true);
    view.setUint32(offset + 4, this.versionBaseHigh + carry, true);
    this.bytes[offset + 8] = 0; // is_deleted
    offset += 9;
    view.setUint16(offset, source.micros, true);
    if (source.quality === null) {
      this.bytes[offset + 2] = 1;
      offset += 3;
    } else {
      this.bytes[offset + 2] = 0;
      view.setUint32(offset + 3, source.quality, true);
      offset += 7;
    }
    this.bytes[offset] = source.historical ? 1 : 0;
    this.length = offset + 1;
  }

  private grow(): void {
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + MAX_POINT_ROW_BYTES));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
}

export interface PointRow {
  organizationId: number;
  instrumentId: number;
  ts: number;
  value: number | null;
  /** Decimal: versions exceed 2^53. */
  version: string;
  isDeleted: boolean;
  micros: number;
  quality: number | null;
  historical: boolean;
}

/** Bytes a row's source details take after is_deleted (the byte at `offset` is its quality's null flag). */
function sourceBytesAt(bytes: Uint8Array, offset: number, layout: PointRowsLayout): number {
  if (layout !== 'RowBinaryWithSource') return 0;
  return bytes[offset + 2] === 1 ? SOURCE_BYTES_NO_QUALITY : SOURCE_BYTES_WITH_QUALITY;
}

/** Reads RowBinary rows back (tests and diagnostics; the worker inserts the bytes as they are). */
export function decodePointRows(bytes: Uint8Array, layout: PointRowsLayout = POINT_ROWS_FORMAT): PointRow[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const rows: PointRow[] = [];
  let offset = 0;
  const safe = (at: number) => {
    const value = view.getBigInt64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`not a safe integer at byte ${at}`);
    return Number(value);
  };
  while (offset < bytes.length) {
    const row: PointRow = {
      organizationId: safe(offset), instrumentId: safe(offset + 8), ts: safe(offset + 16), value: null, version: '', isDeleted: false,
      micros: 0, quality: null, historical: false,
    };
    offset += 24;
    if (bytes[offset++] === 0) {
      row.value = view.getFloat64(offset, true);
      offset += 8;
    }
    row.version = view.getBigUint64(offset, true).toString();
    row.isDeleted = bytes[offset + 8] === 1;
    offset += 9;
    const sourceBytes = sourceBytesAt(bytes, offset, layout);
    if (sourceBytes > 0) {
      row.micros = view.getUint16(offset, true);
      if (sourceBytes === SOURCE_BYTES_WITH_QUALITY) row.quality = view.getUint32(offset + 3, true);
      row.historical = bytes[offset + sourceBytes - 1] === 1;
      offset += sourceBytes;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * Gives rows written before their request had a version (PointRowWriter with `versionSeq` 0, so each
 * row's version is its suffix alone) the request's version, in place: adds `versionSeq * 10^10` to
 * every row's version. Small bulk posts draw their version in the statement that records them, after
 * their rows were written; whoever inserts such rows (the api, or the ingest-worker from the recorded
 * data) stamps them first.
 */
export function stampVersions(bytes: Uint8Array, versionSeq: number, layout: PointRowsLayout = POINT_ROWS_FORMAT): void {
  if (layout === 'TabSeparated') throw new Error('TSV rows are never written before their version');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const base = BigInt(versionSeq) * VERSION_SEQ_FACTOR;
  let offset = 0;
  while (offset < bytes.length) {
    // organization_id, instrument_id and ts (24 bytes), then the value's null flag and its double.
    offset += bytes[offset + 24] === 0 ? 33 : 25;
    view.setBigUint64(offset, view.getBigUint64(offset, true) + base, true);
    offset += 9;
    offset += sourceBytesAt(bytes, offset, layout);
  }
}

/**
 * A recorded post's rows as they are inserted: as written, or (`versionsFromJob`: written before the
 * version was drawn) a copy stamped with it. The recorded rows stay as written, so a retried insert
 * stamps them again from the same bytes.
 */
export function rowsWithVersion(rows: Uint8Array, versionSeq: number, versionsFromJob: boolean, layout: PointRowsLayout): Uint8Array {
  if (!versionsFromJob) return rows;
  const stamped = rows.slice();
  stampVersions(stamped, versionSeq, layout);
  return stamped;
}
