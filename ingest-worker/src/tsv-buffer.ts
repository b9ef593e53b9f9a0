/**
 * A reusable byte buffer that TSV lines are appended to. Writing ASCII lines straight into bytes keeps
 * the worker's memory flat on huge files (no array of hundreds of thousands of strings to join, and
 * little garbage for V8 to promote), which is also faster.
 */
export class TsvBuffer {
  private buffer: Buffer;
  length = 0;
  lines = 0;

  constructor(initialBytes: number) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** Appends one line (ASCII: ids, numbers and versions only). */
  append(line: string): void {
    this.reserve(line.length);
    this.length += this.buffer.write(line, this.length, 'latin1');
    this.lines += 1;
  }

  /**
   * Appends a piece of a line (ASCII), byte by byte: for the short pieces a CSV cell turns into, this
   * beats Buffer#write, whose per-call cost dominates.
   */
  write(text: string): void {
    const length = text.length;
    this.reserve(length);
    const buffer = this.buffer;
    let position = this.length;
    for (let index = 0; index < length; index += 1) buffer[position++] = text.charCodeAt(index);
    this.length = position;
  }

  /**
   * Appends a numeric cell: its own text when ClickHouse reads that as exactly `value` (an optional
   * minus, digits and at most one decimal point), which spares a number-to-text conversion; else `value`.
   */
  writeNumber(raw: string, value: number): void {
    const length = raw.length;
    this.reserve(length);
    const buffer = this.buffer;
    const start = this.length;
    let position = start;
    let index = 0;
    if (raw.charCodeAt(0) === 45 /* - */) {
      buffer[position++] = 45;
      index = 1;
    }
    let digits = 0;
    let point = false;
    for (; index < length; index += 1) {
      const code = raw.charCodeAt(index);
      if (code >= 48 && code <= 57) digits += 1;
      else if (code !== 46 /* . */ || point) break;
      else point = true;
      buffer[position++] = code;
    }
    if (index === length && digits > 0) {
      this.length = position;
      return;
    }
    this.length = start;
    this.write(String(value));
  }

  /** The bytes written so far (a view: valid until the next reset). */
  contents(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  reset(): void {
    this.length = 0;
    this.lines = 0;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
