/**
 * A read's readings as the JSON array the api answers, written from ClickHouse's TabSeparated text as
 * it arrives: one chunk of JSON per chunk of text, so the answer is never held whole and the event loop
 * serves other requests between chunks. The rows come from the database after the request was
 * validated, so they are trusted: no schema runs per reading. Values keep ClickHouse's text (the
 * shortest round-trip digits, as JavaScript writes them), NULL is null and -0 is 0 as JSON.stringify
 * writes them.
 */
import type { Readable } from 'node:stream';
import { isoWithMicros } from '@bioprocess/shared/sub-millisecond-time';

const NEWLINE = 10;

/** `\N` (NULL) or a number's text as JSON. */
function jsonNumber(text: string): string {
  if (text === '\\N') return 'null';
  if (text === '-0') return '0';
  return text;
}

/**
 * The columns of the lines: `instrument_id<TAB>ts<TAB>value`, with `<TAB>min<TAB>max` when bucketed,
 * or with `<TAB>micros<TAB>quality<TAB>historical` (raw readings with what their source said).
 */
export type ReadingLines = 'raw' | 'raw-with-source' | 'bucketed';

/**
 * A raw reading's source fields: its time gets six fraction digits when it has microseconds, and
 * `"quality"` and `"historical":true` appear only on readings whose source gave them, so readings of
 * sources that say nothing look as they always did.
 */
function readingWithSource(cells: string[]): string {
  const micros = Number(cells[3]);
  const quality = cells[4] === '\\N' ? '' : `,"quality":${cells[4]}`;
  const historical = cells[5] === '1' ? ',"historical":true' : '';
  return `{"ts":"${isoWithMicros(Number(cells[1]), micros)}","instrument_id":${cells[0]},"value":${jsonNumber(cells[2]!)}${quality}${historical}}`;
}

/** Lines of `shape` into a JSON array of readings; `onRow` counts them. */
export async function* readingsAsJson(text: Readable, shape: ReadingLines, onRow: () => void = () => undefined): AsyncGenerator<Buffer> {
  const bucketed = shape === 'bucketed';
  let rest: Buffer | null = null;
  let first = true;
  yield Buffer.from('[');
  for await (const chunk of text as AsyncIterable<Buffer>) {
    const buffer: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    const lastNewline = buffer.lastIndexOf(NEWLINE);
    if (lastNewline < 0) {
      rest = buffer;
      continue;
    }
    rest = lastNewline + 1 < buffer.length ? buffer.subarray(lastNewline + 1) : null;
    const lines = buffer.toString('latin1', 0, lastNewline).split('\n');
    const parts: string[] = [];
    for (const line of lines) {
      const cells = line.split('\t');
      const reading = shape === 'raw-with-source' ? readingWithSource(cells) : `{"ts":"${new Date(Number(cells[1])).toISOString()}","instrument_id":${cells[0]},"value":${jsonNumber(cells[2]!)}`
        + (bucketed ? `,"min":${jsonNumber(cells[3]!)},"max":${jsonNumber(cells[4]!)}}` : '}');
      parts.push(first ? reading : `,${reading}`);
      first = false;
      onRow();
    }
    yield Buffer.from(parts.join(''), 'latin1');
  }
  if (rest && rest.length > 0) throw new Error('ClickHouse ended a TabSeparated answer in the middle of a line');
  yield Buffer.from(']');
}
