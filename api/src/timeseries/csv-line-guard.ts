/**
 * The upload-time CSV checks that need the bytes: a pass-through stream on the spool that refuses a
 * line longer than the line limit (400 naming the line) while the file streams in, and a look at the
 * spooled file's first bytes for a header wider than the column limit. The worker checks the same
 * limits on the whole file (a quoted field running over lines, a data section's header further on);
 * these answer the plain cases before a job exists.
 */
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { CSV_LIMITS, checkCsvHeader, decodeCsvBytes, lineTooLongMessage } from '@bioprocess/shared/csv/index';
import { badRequest } from '../platform/http-error.ts';

const LF = 0x0a;
/** Bytes of the spooled file the header check reads: as much as the console's preview. */
const HEAD_BYTES = 256 * 1024;

/** Fails the spool with a 400 at the first line longer than `maxLineBytes`; one pass over each chunk's line feeds. */
export function lineLengthGuard(maxLineBytes: number = CSV_LIMITS.defaultMaxLineBytes): Transform {
  /** Bytes of the current line so far, and the line's 1-based number. */
  let lineBytes = 0;
  let line = 1;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      let start = 0;
      for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, end + 1)) {
        if (lineBytes + end - start > maxLineBytes) return callback(badRequest(lineTooLongMessage(line, maxLineBytes)));
        lineBytes = 0;
        line += 1;
        start = end + 1;
      }
      lineBytes += chunk.length - start;
      if (lineBytes > maxLineBytes) return callback(badRequest(lineTooLongMessage(line, maxLineBytes)));
      callback(null, chunk);
    },
  });
}

/** Throws a 400 when the spooled file's header (within its first bytes) is wider than the column limit. */
export async function checkSpooledHeader(filePath: string, maxColumns: number = CSV_LIMITS.defaultMaxColumns): Promise<void> {
  const handle = await open(filePath, 'r');
  let head: Buffer;
  let partial: boolean;
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
    partial = bytesRead === HEAD_BYTES;
  } finally {
    await handle.close();
  }
  const { text } = decodeCsvBytes(head, { partial });
  const problem = checkCsvHeader(text, { partial, maxColumns });
  if (problem) throw badRequest(problem);
}
