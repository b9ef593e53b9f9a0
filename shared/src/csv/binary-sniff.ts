/**
 * Tells a text file from a binary one by its first bytes, so a workbook or an archive renamed `.csv`
 * is refused with what it looks like instead of previewing as garbage. A UTF-16 file has NUL bytes
 * too, so its byte-order mark is checked first.
 */
import { byteOrderMark } from './encoding.ts';

/** Control bytes other than tab, line feed, form feed and carriage return. */
function isControlByte(byte: number): boolean {
  return byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0c && byte !== 0x0d;
}

const SIGNATURES: { bytes: number[]; message: string }[] = [
  {
    bytes: [0x50, 0x4b, 0x03, 0x04],
    message: 'This looks like an Excel workbook or another zip archive named as a text file; upload a workbook under its .xlsx name, or save the sheet as CSV or text.',
  },
  {
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    message: 'This looks like an old Excel workbook (.xls); save the sheet as CSV or text and upload that.',
  },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], message: 'This looks like a PDF document; export the data as CSV or text and upload that.' },
  { bytes: [0x1f, 0x8b], message: 'This looks like a gzip archive; unpack it and upload the CSV or text file inside.' },
];

export const NOT_TEXT_MESSAGE = 'This file is not text; upload a CSV or text export (comma, semicolon or tab separated).';

/** Share of control bytes above which a file without a BOM is not text. */
const CONTROL_BYTE_SHARE = 0.01;

/** The message for a file whose first bytes are not text, or null when they may be read as text. */
export function sniffBinary(bytes: Uint8Array): string | null {
  for (const signature of SIGNATURES) {
    if (signature.bytes.every((byte, index) => bytes[index] === byte)) return signature.message;
  }
  const mark = byteOrderMark(bytes);
  if (mark && mark.encoding !== 'utf-8') return null;
  let control = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index]!;
    if (byte === 0) return NOT_TEXT_MESSAGE;
    if (isControlByte(byte)) control += 1;
  }
  return bytes.length > 0 && control / bytes.length > CONTROL_BYTE_SHARE ? NOT_TEXT_MESSAGE : null;
}
