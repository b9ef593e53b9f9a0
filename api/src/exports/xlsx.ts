/**
 * The XLSX form of a time-series export, written with exceljs's streaming WorkbookWriter: a metadata
 * sheet (run, unit operation, instruments and units, export time, user), then one sheet per unit
 * operation in the wide layout (a further sheet continues one that reaches Excel's row limit). Rows are
 * committed as they are read and the writer waits whenever the response is full, so memory stays flat.
 */
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import ExcelJS from 'exceljs';
import { wideTitles, type SeriesExportInput } from './csv-formats.ts';
import { elapsedSeconds, valueOrNull } from './cells.ts';
import { sectionBatches } from './point-source.ts';
import type { ExportSection } from './scope.ts';
import { addSampleSheets, type ExportSamples } from './samples.ts';

/** Excel's rows per sheet, header included. */
const SHEET_MAX_ROWS = 1_048_576;

export interface XlsxDescription {
  exportedAt: Date;
  user: string;
  format: string;
  bucket: string | null;
  /** The unit operations' samples, written as sheets of their own after the readings. */
  samples?: ExportSamples;
}

/** Sheet names: at most 31 characters, none of `[]:*?/\`, unique. */
function sheetName(section: ExportSection, taken: Set<string>): string {
  const base = (section.unitOperation ? `${section.unitOperation.id} ${section.unitOperation.type}` : 'Readings')
    .replace(/[[\]:*?/\\]/g, ' ').slice(0, 25);
  let name = base;
  for (let suffix = 2; taken.has(name.toLowerCase()); suffix += 1) name = `${base} (${suffix})`;
  taken.add(name.toLowerCase());
  return name;
}

async function writeWorkbook(output: PassThrough, input: SeriesExportInput, description: XlsxDescription): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useStyles: true, useSharedStrings: false });
  const waitForReader = async () => {
    // Lets the zip compressor run, then waits while the response holds more than the client took.
    await nextTurn();
    while (output.writableNeedDrain && !output.destroyed) await Promise.race([once(output, 'drain'), once(output, 'close')]);
  };

  const metadata = workbook.addWorksheet('Metadata');
  metadata.columns = [{ width: 24 }, { width: 40 }, { width: 16 }, { width: 16 }];
  metadata.addRow(['Exported at', description.exportedAt]).commit();
  metadata.addRow(['Exported by', description.user]).commit();
  metadata.addRow(['Format', description.format]).commit();
  metadata.addRow(['Readings', description.bucket === null ? 'raw' : `downsampled to ${description.bucket} (avg, min, max)`]).commit();
  metadata.addRow([]).commit();
  metadata.addRow(['Sheet', 'Run', 'Unit operation', 'Unit operation id', 'Start', 'End']).commit();
  const taken = new Set<string>(['metadata']);
  const names = input.scope.sections.map((section) => sheetName(section, taken));
  input.scope.sections.forEach((section, index) => {
    metadata.addRow([names[index], section.unitOperation?.runName ?? '', section.unitOperation?.type ?? '', section.unitOperation?.id ?? '',
      new Date(section.startMs), new Date(section.endMs)]).commit();
  });
  metadata.addRow([]).commit();
  metadata.addRow(['Instrument', 'Column', 'Unit', 'Instrument id']).commit();
  for (const instrument of input.scope.instruments) metadata.addRow([instrument.name, instrument.title, instrument.unit ?? '', instrument.id]).commit();
  metadata.commit();

  const bucketed = input.bucketMs !== null;
  const perInstrument = bucketed ? 3 : 1;
  for (const [index, section] of input.scope.sections.entries()) {
    const header = ['timestamp', 'elapsed_s', ...wideTitles(section.instruments.map((instrument) => instrument.title), bucketed)];
    const columnOf = new Map(section.instruments.map((instrument, position) => [instrument.id, 2 + position * perInstrument]));
    let part = 1;
    let sheet: ExcelJS.Worksheet;
    let sheetRows = 0;
    const openSheet = () => {
      sheet = workbook.addWorksheet(part === 1 ? names[index]! : `${names[index]!.slice(0, 25)} (${part})`);
      sheet.getColumn(1).numFmt = 'yyyy-mm-dd hh:mm:ss.000';
      sheet.getColumn(1).width = 24;
      sheet.addRow(header).commit();
      sheetRows = 1;
    };
    openSheet();
    let current = Number.NaN;
    let currentMicros = 0;
    let cells: Array<number | Date | null> = [];
    const flush = () => {
      if (current !== current) return;
      if (sheetRows >= SHEET_MAX_ROWS) {
        sheet.commit();
        part += 1;
        openSheet();
      }
      sheet.addRow(cells).commit();
      sheetRows += 1;
      input.tally.rows += 1;
    };
    for await (const batch of sectionBatches(input.clickhouse, input.organizationId, section, input.bucketMs)) {
      if (output.destroyed) return;
      const { ts, micros, instrument, value, min, max } = batch;
      for (let index = 0; index < batch.count; index += 1) {
        if (ts[index] !== current || micros[index] !== currentMicros) {
          flush();
          current = ts[index]!;
          currentMicros = micros[index]!;
          cells = new Array<number | Date | null>(header.length).fill(null);
          // A spreadsheet's date holds milliseconds: the microseconds are in elapsed_s.
          cells[0] = new Date(current);
          cells[1] = elapsedSeconds(current, section.originMs, currentMicros);
        }
        const column = columnOf.get(instrument[index]!)!;
        cells[column] = valueOrNull(value[index]!);
        if (bucketed) {
          cells[column + 1] = valueOrNull(min![index]!);
          cells[column + 2] = valueOrNull(max![index]!);
        }
      }
      input.tally.points += batch.count;
      await waitForReader();
    }
    flush();
    sheet!.commit();
  }
  if (description.samples) input.tally.rows += addSampleSheets(workbook, description.samples);
  await workbook.commit();
}

/** The workbook as a readable stream; a failure while writing destroys it with the error. */
export function xlsxStream(input: SeriesExportInput, description: XlsxDescription, onEnd: (error: unknown) => void): Readable {
  const output = new PassThrough({ highWaterMark: 1024 * 1024 });
  writeWorkbook(output, input, description).then(
    () => onEnd(output.destroyed && !output.writableFinished ? new Error('the client went away') : null),
    (error: unknown) => {
      onEnd(error);
      output.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return output;
}
