/**
 * The CSV formats of a time-series export, as generators of text chunks (pulled by the response
 * stream, so they run only as fast as the client reads). Every text cell goes through the product's
 * neutralising CSV writer; numbers stay numbers. Raw CSV long, the largest, is written as bytes from
 * ClickHouse's text answer (point-source.ts csvLongText), with the same cells.
 *
 * - long: one row per reading: timestamp, elapsed_s, instrument, instrument_id, unit, value, quality,
 *   historical (or avg, min, max when downsampled);
 * - wide: one row per timestamp (to the microsecond), one column per instrument titled `name [unit]`
 *   (three when downsampled), empty where an instrument has no reading at that time; elapsed_s optional.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { CSV_LONG_BUCKET_COLUMNS, CSV_LONG_COLUMNS } from '@bioprocess/shared/exports';
import { csvCell, csvRow } from '@bioprocess/shared/csv/write';
import { elapsedText, IsoTimestamps, valueText } from './cells.ts';
import { csvLongText, planSection, sectionBatches } from './point-source.ts';
import type { ExportScope } from './scope.ts';

/** Text handed to the response at once: large enough to amortise the stream, small enough to bound memory. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Readings per window of raw CSV long: the api holds a window's text and index while it puts them in
 * time order (about 60 bytes a reading, and the next window's text read meanwhile), so a quarter
 * million keeps that near 30 MB.
 */
const RAW_LONG_WINDOW_POINTS = 250_000;

export interface ExportTally {
  rows: number;
  /** Points read (the progress of an export job; wide rows hold several). */
  points: number;
}

export interface SeriesExportInput {
  clickhouse: ClickHouseClient;
  organizationId: number;
  scope: ExportScope;
  bucketMs: number | null;
  tally: ExportTally;
}

export async function* csvLong(input: SeriesExportInput): AsyncGenerator<string | Buffer> {
  const bucketed = input.bucketMs !== null;
  yield csvRow(bucketed ? CSV_LONG_BUCKET_COLUMNS : CSV_LONG_COLUMNS);
  const stamps = new IsoTimestamps();
  for (const section of input.scope.sections) {
    if (section.instruments.length === 0 || section.endMs < section.startMs) continue;
    const plan = await planSection(input.clickhouse, input.organizationId, section, input.bucketMs ?? 1, bucketed ? undefined : RAW_LONG_WINDOW_POINTS);
    if (!bucketed) {
      // Raw readings: written as bytes from ClickHouse's text, the instrument's cells made once.
      const middles = section.instruments.map((instrument) => Buffer.from(`${csvCell(instrument.name)},${instrument.id},${csvCell(instrument.unit)},`, 'utf8'));
      yield* csvLongText(input.clickhouse, input.organizationId, section, plan, middles, (rows) => {
        input.tally.rows += rows;
        input.tally.points += rows;
      });
      continue;
    }
    const middles = new Map(section.instruments.map((instrument) =>
      [instrument.id, `,${csvCell(instrument.name)},${instrument.id},${csvCell(instrument.unit)},`]));
    let out = '';
    for await (const batch of sectionBatches(input.clickhouse, input.organizationId, section, input.bucketMs, undefined, plan)) {
      const { ts, instrument, value, min, max } = batch;
      for (let index = 0; index < batch.count; index += 1) {
        const ms = ts[index]!;
        out += `${stamps.format(ms)},${elapsedText(ms, section.originMs)}${middles.get(instrument[index]!)}${valueText(value[index]!)}`;
        out += bucketed ? `,${valueText(min![index]!)},${valueText(max![index]!)}\r\n` : '\r\n';
      }
      input.tally.rows += batch.count;
      input.tally.points += batch.count;
      if (out.length >= CHUNK_CHARS) {
        yield out;
        out = '';
      }
    }
    if (out.length > 0) yield out;
  }
}

/** Column titles of the wide layout (CSV wide and the XLSX sheets). */
export function wideTitles(titles: readonly string[], bucketed: boolean): string[] {
  return bucketed ? titles.flatMap((title) => [`${title} avg`, `${title} min`, `${title} max`]) : [...titles];
}

export async function* csvWide(input: SeriesExportInput, withElapsed: boolean): AsyncGenerator<string> {
  const bucketed = input.bucketMs !== null;
  const perInstrument = bucketed ? 3 : 1;
  const instruments = input.scope.instruments;
  yield csvRow(['timestamp', ...(withElapsed ? ['elapsed_s'] : []), ...wideTitles(instruments.map((instrument) => instrument.title), bucketed)]);
  const columnOf = new Map(instruments.map((instrument, index) => [instrument.id, index * perInstrument]));
  const width = instruments.length * perInstrument;
  const stamps = new IsoTimestamps();
  for (const section of input.scope.sections) {
    let out = '';
    let current = Number.NaN;
    let currentMicros = 0;
    let cells: string[] = [];
    const flush = () => {
      if (current !== current) return;
      out += `${stamps.format(current, currentMicros)}${withElapsed ? `,${elapsedText(current, section.originMs, currentMicros)}` : ''},${cells.join(',')}\r\n`;
      input.tally.rows += 1;
    };
    for await (const batch of sectionBatches(input.clickhouse, input.organizationId, section, input.bucketMs)) {
      const { ts, micros, instrument, value, min, max } = batch;
      for (let index = 0; index < batch.count; index += 1) {
        // Readings of one millisecond with different microseconds are rows of their own.
        if (ts[index] !== current || micros[index] !== currentMicros) {
          flush();
          current = ts[index]!;
          currentMicros = micros[index]!;
          cells = new Array<string>(width).fill('');
        }
        const column = columnOf.get(instrument[index]!)!;
        cells[column] = valueText(value[index]!);
        if (bucketed) {
          cells[column + 1] = valueText(min![index]!);
          cells[column + 2] = valueText(max![index]!);
        }
      }
      input.tally.points += batch.count;
      if (out.length >= CHUNK_CHARS) {
        yield out;
        out = '';
      }
    }
    flush();
    if (out.length > 0) yield out;
  }
}
