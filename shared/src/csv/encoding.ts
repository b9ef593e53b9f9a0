/**
 * Byte decoding for CSV files: UTF-8 with or without BOM, UTF-16 (little or big endian) by its BOM
 * (SoftMax Pro and Vi-CELL BLU write it), and Latin-1 when the bytes are not valid UTF-8 (instrument
 * software such as DASware writes °C as the single byte 0xB0). "Latin-1" is read as Windows-1252, as
 * the WHATWG Encoding Standard reads the label (and every browser's TextDecoder('latin1') does): the
 * Windows programs that write such files put €, en dashes and curly quotes at 0x80-0x9F, where
 * ISO-8859-1 has only control characters no export means.
 * Browser-safe (TextDecoder only). The decision is made once per file: a UTF-16 BOM settles it at the
 * start; otherwise the first invalid UTF-8 byte switches the rest of the file to Latin-1, everything
 * before it was valid UTF-8 and stays as decoded.
 */
export type CsvEncoding = 'utf-8' | 'latin1' | 'utf-16le' | 'utf-16be';
export const CSV_ENCODINGS: readonly CsvEncoding[] = ['utf-8', 'latin1', 'utf-16le', 'utf-16be'];

/** The encoding a byte-order mark names, and the mark's length; null without one. */
export function byteOrderMark(bytes: Uint8Array): { encoding: CsvEncoding; length: number } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

/** Windows-1252's characters for the bytes 0x80-0x9F; the five it leaves undefined keep their byte's code point (as WHATWG does). */
const WINDOWS_1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f'
  + '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Latin-1 as Windows-1252: every byte to the code point of the same value, but 0x80-0x9F to
 * Windows-1252's characters. Done by hand so no ICU label is needed (Node may lack full ICU).
 */
function decodeLatin1(bytes: Uint8Array): string {
  let text = '';
  const block = 8192;
  for (let offset = 0; offset < bytes.length; offset += block) {
    // apply() takes the typed array as the argument list directly (no copy into an array).
    text += String.fromCharCode.apply(null, bytes.subarray(offset, offset + block) as unknown as number[]);
  }
  return text.replace(/[\u0080-\u009f]/g, (character) => WINDOWS_1252_HIGH[character.charCodeAt(0) - 0x80]!);
}

/** Length of the prefix of `bytes` that does not end inside a multi-byte UTF-8 sequence. */
function completeUtf8Length(bytes: Uint8Array): number {
  const length = bytes.length;
  // A sequence is at most 4 bytes: look back at most 3 bytes for its lead byte.
  for (let back = 1; back <= Math.min(3, length); back += 1) {
    const byte = bytes[length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    if (byte < 0x80) return length; // ASCII: nothing is cut
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return back < needed ? length - back : length;
  }
  return length;
}

/** Incremental decoder: feed byte chunks in order, get text chunks. */
export class CsvTextDecoder {
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  /** UTF-16 keeps an odd byte or a cut surrogate pair between chunks itself (stream mode). */
  private utf16: InstanceType<typeof TextDecoder> | null = null;
  private readonly forced: boolean;
  private carry: Uint8Array = new Uint8Array(0);
  private started = false;
  /** The encoding in use; starts as UTF-8 unless given (a resumed read reuses the first pass's answer). */
  encoding: CsvEncoding;

  constructor(options: { encoding?: CsvEncoding } = {}) {
    this.encoding = options.encoding ?? 'utf-8';
    this.forced = options.encoding !== undefined;
    if (this.encoding === 'utf-16le' || this.encoding === 'utf-16be') this.utf16 = new TextDecoder(this.encoding);
  }

  decode(chunk: Uint8Array): string {
    let bytes = chunk;
    if (this.utf16 && this.started) return this.utf16.decode(chunk, { stream: true });
    if (this.carry.length > 0) {
      const joined = new Uint8Array(this.carry.length + chunk.length);
      joined.set(this.carry);
      joined.set(chunk, this.carry.length);
      bytes = joined;
      this.carry = new Uint8Array(0);
    }
    if (!this.started) {
      // Wait for 3 bytes before deciding whether the file starts with a BOM.
      if (bytes.length < 3) {
        this.carry = bytes.slice();
        return '';
      }
      this.started = true;
      bytes = this.skipByteOrderMark(bytes);
    }
    if (this.utf16) return this.utf16.decode(bytes, { stream: true });
    if (this.encoding === 'latin1') return decodeLatin1(bytes);
    const complete = completeUtf8Length(bytes);
    if (complete < bytes.length) this.carry = bytes.slice(complete);
    try {
      return this.utf8.decode(bytes.subarray(0, complete));
    } catch {
      this.encoding = 'latin1';
      this.carry = new Uint8Array(0);
      return decodeLatin1(bytes);
    }
  }

  /** Flushes bytes held back (an incomplete final sequence is not UTF-8, so it is read as Latin-1). */
  end(): string {
    const rest = this.carry;
    this.carry = new Uint8Array(0);
    if (rest.length === 0) return this.utf16 && this.started ? this.utf16.decode() : '';
    if (!this.started) {
      this.started = true;
      return this.decodeRest(this.skipByteOrderMark(rest));
    }
    return this.decodeRest(rest);
  }

  /** Drops a BOM; a UTF-16 one also settles the encoding unless the caller named one. */
  private skipByteOrderMark(bytes: Uint8Array): Uint8Array {
    const mark = byteOrderMark(bytes);
    if (!mark) return bytes;
    if (mark.encoding !== 'utf-8' && !this.forced) {
      this.encoding = mark.encoding;
      this.utf16 = new TextDecoder(mark.encoding);
    }
    return mark.encoding === this.encoding || (mark.encoding === 'utf-8' && this.encoding !== 'utf-16le' && this.encoding !== 'utf-16be')
      ? bytes.subarray(mark.length)
      : bytes;
  }

  private decodeRest(bytes: Uint8Array): string {
    if (this.utf16) return this.utf16.decode(bytes);
    if (this.encoding === 'utf-8') {
      try {
        return this.utf8.decode(bytes);
      } catch {
        this.encoding = 'latin1';
      }
    }
    return decodeLatin1(bytes);
  }
}

/**
 * One-shot decoding (the console's preview of the first part of a file). With `partial`, the bytes are
 * a cut prefix, so an incomplete sequence at the very end is dropped instead of forcing Latin-1.
 */
export function decodeCsvBytes(
  bytes: Uint8Array,
  options: { partial?: boolean; encoding?: CsvEncoding } = {},
): { text: string; encoding: CsvEncoding } {
  const decoder = new CsvTextDecoder({ encoding: options.encoding });
  let text = decoder.decode(bytes);
  if (!options.partial) text += decoder.end();
  return { text, encoding: decoder.encoding };
}
