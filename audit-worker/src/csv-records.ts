/**
 * Records of an RFC 4180 CSV stream (comma, double-quote quoting with "" inside, CRLF or LF record
 * ends), as arrays of cells. The offline verifier reads exports of a million entries and more, about
 * 450 MB: csv-parse reads some 25 MB/s on the reference machine, which alone takes most of the
 * minute the verifier is allowed; scanning with indexOf for the few characters that matter reads the
 * same file several times faster. Anything outside RFC 4180 (a quote inside an unquoted cell, text
 * after a closing quote) is an error naming the record, never a guess.
 */
const QUOTE = 34;
const COMMA = 44;
const CR = 13;
const LF = 10;

export class CsvFormatError extends Error {}

export async function* csvRecords(chunks: AsyncIterable<string | Buffer>): AsyncGenerator<string[]> {
  let rest = '';
  let record = 0;
  let first = true;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of chunks) {
    let text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    first = false;
    const { records, consumed } = splitRecords(text, false, record);
    record += records.length;
    rest = text.slice(consumed);
    yield* records;
  }
  rest += decoder.decode();
  if (rest.length > 0) yield* splitRecords(rest, true, record).records;
}

/**
 * The complete records at the start of `text`, and how much of it they took. Without `final`, a record
 * that may continue in the next chunk is left for it.
 */
function splitRecords(text: string, final: boolean, before: number): { records: string[][]; consumed: number } {
  const records: string[][] = [];
  const length = text.length;
  let position = 0;
  let consumed = 0;
  records: while (position < length) {
    const fields: string[] = [];
    for (;;) {
      if (text.charCodeAt(position) === QUOTE) {
        let value = '';
        let from = position + 1;
        for (;;) {
          const quote = text.indexOf('"', from);
          if (quote === -1 || (quote + 1 >= length && !final)) break records;
          if (text.charCodeAt(quote + 1) === QUOTE) {
            value += text.slice(from, quote + 1);
            from = quote + 2;
            continue;
          }
          value += text.slice(from, quote);
          position = quote + 1;
          break;
        }
        fields.push(value);
      } else {
        let end = position;
        while (end < length) {
          const code = text.charCodeAt(end);
          if (code === COMMA || code === CR || code === LF) break;
          if (code === QUOTE) throw new CsvFormatError(`record ${before + records.length + 1}: a quote inside an unquoted cell`);
          end += 1;
        }
        if (end >= length && !final) break records;
        fields.push(text.slice(position, end));
        position = end;
      }
      if (position >= length) {
        if (!final) break records;
        records.push(fields);
        consumed = position;
        break records;
      }
      const code = text.charCodeAt(position);
      if (code === COMMA) {
        position += 1;
        continue;
      }
      if (code === CR) {
        if (position + 1 >= length && !final) break records;
        position += text.charCodeAt(position + 1) === LF ? 2 : 1;
      } else if (code === LF) {
        position += 1;
      } else {
        throw new CsvFormatError(`record ${before + records.length + 1}: text after a closing quote`);
      }
      records.push(fields);
      consumed = position;
      break;
    }
  }
  return { records, consumed };
}
