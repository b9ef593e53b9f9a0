/**
 * A growable byte buffer that ASCII text is written into piece by piece: the TSV and JSON that the
 * ingest paths produce for millions of points. Writing bytes straight into one buffer keeps memory
 * flat (no array of strings to join, little garbage) and, for short pieces in an isolate that never
 * loaded ioredis (see README, "How points travel"), a charCodeAt loop beats Buffer#write, whose
 * per-call cost dominates.
 */
export class AsciiBuffer {
  bytes: Uint8Array;
  length = 0;
  private view: DataView | null = null;
  private viewBytes: Uint8Array | null = null;

  constructor(initialBytes: number) {
    this.bytes = new Uint8Array(Math.max(1024, Math.ceil(initialBytes)));
  }

  /** Makes room for `count` more bytes. */
  reserve(count: number): void {
    if (this.length + count <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + count));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  /** A DataView of the bytes, for writing binary numbers in place; valid until the next reserve. */
  dataView(): DataView {
    const bytes = this.bytes;
    if (this.viewBytes !== bytes) {
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.viewBytes = bytes;
    }
    return this.view!;
  }

  /** Appends ASCII text. */
  text(value: string): void {
    const length = value.length;
    this.reserve(length);
    const bytes = this.bytes;
    let position = this.length;
    for (let index = 0; index < length; index += 1) bytes[position++] = value.charCodeAt(index);
    this.length = position;
  }

  byte(code: number): void {
    this.reserve(1);
    this.bytes[this.length++] = code;
  }

  /** Appends bytes [start, end) of `source` (short ranges: a loop beats subarray + set). */
  copy(source: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    const bytes = this.bytes;
    let position = this.length;
    for (let index = start; index < end; index += 1) bytes[position++] = source[index]!;
    this.length = position;
  }

  /** Appends all of `source` (short constants). */
  all(source: Uint8Array): void {
    this.copy(source, 0, source.length);
  }

  /** The bytes written so far (a view: valid until the next write or reset). */
  contents(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** A copy of the bytes written so far, in memory of its own (it can be moved to another thread). */
  take(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  reset(): void {
    this.length = 0;
  }
}
