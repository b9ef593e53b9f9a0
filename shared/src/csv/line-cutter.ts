/**
 * The streaming half of the api's cuts of a spooled upload (TableCutter, DataSectionCutter): text in
 * pieces of any size is split into whole lines, each with its line feed, and each line is handed to
 * the cut's own rule, which keeps it, drops it or ends the cut. Linear: each character is looked at
 * once, and a line cut across pieces is kept as pieces until its line feed arrives.
 */
export abstract class LineCutter {
  private pending: string[] = [];

  /** True once the cut is complete: the rest of the input can be skipped. */
  abstract get finished(): boolean;

  /** The line as kept ('' when dropped); a line that completes the cut sets `finished`. */
  protected abstract acceptLine(line: string): string;

  push(text: string): string {
    if (this.finished) return '';
    let output = '';
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      const piece = text.slice(start, end + 1);
      start = end + 1;
      const whole = this.pending.length > 0 ? this.pending.join('') + piece : piece;
      this.pending = [];
      output += this.acceptLine(whole);
      if (this.finished) return output;
    }
    if (start < text.length) this.pending.push(text.slice(start));
    return output;
  }

  /** The last line, when the input ended without a line feed. */
  end(): string {
    if (this.finished || this.pending.length === 0) return '';
    const last = this.pending.join('');
    this.pending = [];
    return this.acceptLine(last);
  }
}
