/**
 * POST /api/v1/spreadsheet-conversions: one sheet of an Excel workbook (.xlsx) as CSV text (multipart:
 * an optional `sheet` field, then the `file`). The console's upload wizard converts a workbook here
 * first and then treats the CSV as the chosen file, so every step it takes on a text export (preview,
 * detection, the file's time range, the upload) works on a workbook too. The sheets of the workbook
 * and the one read are in the `Spreadsheet-Sheets` (a JSON array, percent-encoded) and
 * `Spreadsheet-Sheet` headers. Nothing is stored; the workbook is read as a stream.
 */
import { Readable } from 'node:stream';
import { checkCsvFile, isSpreadsheetName } from '@bioprocess/shared/csv/index';
import { TIME_SERIES_MESSAGES } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, HttpError } from '../platform/http-error.ts';
import { SPREADSHEET_SHEET_FIELD, spreadsheetCsvLines, spreadsheetSheetSchema, type SpreadsheetSheets } from './spreadsheet-csv.ts';

export const SPREADSHEET_CONVERSION_MESSAGES = {
  notASpreadsheet: 'Only an Excel workbook (.xlsx) is converted; upload a text export as it is.',
  tooLarge: (maxBytes: number) => `The sheet's CSV text is larger than ${maxBytes} bytes, the largest upload allowed.`,
} as const;

export async function spreadsheetConversionRoutes(app: App, deps: AppDeps): Promise<void> {
  app.post('/api/v1/spreadsheet-conversions', {
    config: { access: 'create' },
    schema: {
      summary: 'Convert one sheet of an Excel workbook (.xlsx) to CSV text (multipart: optionally `sheet`, then the `file`)',
      description: 'Answers the CSV text of the sheet named by `sheet` (else the first): dates as yyyy-MM-dd HH:mm:ss[.SSS] wall-clock '
        + 'times, formulas as their results, error cells as written. The `Spreadsheet-Sheets` header lists every sheet (a '
        + 'percent-encoded JSON array) and `Spreadsheet-Sheet` names the one read. Nothing is stored.',
    },
  }, async (request, reply) => {
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a file');
    let sheet: string | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname !== SPREADSHEET_SHEET_FIELD) throw badRequest(`Unknown field '${part.fieldname}'`);
        const parsed = spreadsheetSheetSchema.safeParse(String(part.value));
        if (!parsed.success) throw badRequest(`${SPREADSHEET_SHEET_FIELD}: ${parsed.error.issues[0]!.message}`);
        sheet = parsed.data;
        continue;
      }
      if (part.fieldname !== 'file') {
        part.file.resume();
        continue;
      }
      const name = part.filename ?? '';
      const problem = checkCsvFile({ name, size: 1, type: part.mimetype }, { maxBytes: deps.env.CSV_MAX_BYTES });
      if (problem || !isSpreadsheetName(name)) {
        part.file.resume();
        throw badRequest(problem ?? SPREADSHEET_CONVERSION_MESSAGES.notASpreadsheet);
      }
      let sheets: SpreadsheetSheets | null = null;
      const lines = spreadsheetCsvLines(part.file, sheet, (found) => { sheets = found; });
      // The first line (or the end) comes once the sheet is found: a missing sheet or a file that is
      // not a workbook is still answered as a 400 before the body starts.
      const first = await lines.next();
      const found = sheets as SpreadsheetSheets | null;
      reply.header('content-type', 'text/csv; charset=utf-8');
      if (found) {
        reply.header('spreadsheet-sheets', encodeURIComponent(JSON.stringify(found.names)));
        reply.header('spreadsheet-sheet', encodeURIComponent(found.chosen));
      }
      const maxBytes = deps.env.CSV_MAX_BYTES;
      async function* body(): AsyncGenerator<string> {
        let bytes = 0;
        if (first.done) return;
        for (let line: IteratorResult<string> = first; !line.done; line = await lines.next()) {
          bytes += Buffer.byteLength(line.value);
          if (bytes > maxBytes) throw new HttpError(413, SPREADSHEET_CONVERSION_MESSAGES.tooLarge(maxBytes));
          yield line.value;
        }
      }
      return reply.send(Readable.from(body()));
    }
    throw badRequest(TIME_SERIES_MESSAGES.fileRequired);
  });
}
