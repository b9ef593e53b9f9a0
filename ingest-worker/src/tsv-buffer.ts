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
    if (this.length + line.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + line.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(line, this.length, 'latin1');
    this.lines += 1;
  }

  /** The bytes written so far (a view: valid until the next reset). */
  contents(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  reset(): void {
    this.length = 0;
    this.lines = 0;
  }
}
