/**
 * A read's readings as the JSON array the api answers, written from ClickHouse's TabSeparated text as
 * it arrives: one chunk of JSON per chunk of text, so the answer is never held whole and the event loop
 * serves other requests between chunks. The rows come from the database after the request was
 * validated, so they are trusted: no schema runs per reading. Values keep ClickHouse's text (the
 * shortest round-trip digits, as JavaScript writes them), NULL is null and -0 is 0 as JSON.stringify
 * writes them.
 */
import type { Readable } from 'node:stream';

const NEWLINE = 10;

/** `\N` (NULL) or a number's text as JSON. */
function jsonNumber(text: string): string {
  if (text === '\\N') return 'null';
  if (text === '-0') return '0';
  return text;
}

/**
 * Lines `instrument_id<TAB>ts<TAB>value` (or with `<TAB>min<TAB>max` when `bucketed`) into a JSON
 * array of readings; `onRow` counts them.
 */
export async function* readingsAsJson(text: Readable, bucketed: boolean, onRow: () => void = () => undefined): AsyncGenerator<Buffer> {
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
      const reading = `{"ts":"${new Date(Number(cells[1])).toISOString()}","instrument_id":${cells[0]},"value":${jsonNumber(cells[2]!)}`
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
