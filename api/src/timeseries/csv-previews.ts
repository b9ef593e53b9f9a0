/**
 * POST /api/v1/csv-previews: the detected layout of a file (multipart, the file in a part named
 * `file`, optionally a `choices` JSON field with what the user changed: encoding, delimiter,
 * header_line, time_column, sheet, block). Only the file's first LAYOUT_PREVIEW_BYTES are read, the rest of the
 * part is drained unread; the answer says so (`bytes_read`, `partial`). An Excel workbook (.xlsx) is
 * read as the CSV text of one sheet (`sheet`, else the first), and the answer lists its `sheets`. The detection is the shared
 * one the console's wizard runs (shared/src/csv/detect.ts), so both show the same layout.
 */
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { CSV_MESSAGES, checkCsvFile, detectCsvLayout, isSpreadsheetName, LAYOUT_PREVIEW_BYTES } from '@bioprocess/shared/csv/index';
import { csvReadingSchema, TIME_SERIES_MESSAGES } from '@bioprocess/shared/timeseries';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { spreadsheetHead, type SpreadsheetSheets } from './spreadsheet-csv.ts';

const choicesSchema = csvReadingSchema.pick({ encoding: true, delimiter: true, header_line: true, column_names: true }).extend({
  /** The table has no header row: its first row is data, its columns Column 1, Column 2, ... or `column_names`. */
  no_header: z.boolean().optional(),
  time_column: z.string().min(1).max(200).optional(),
  /** The sheet of an Excel workbook; the first when absent. */
  sheet: z.string().min(1).max(200).optional(),
  prefer_day_first: z.boolean().optional(),
  /** The read block to read (1-based, among the answer's `blocks`); else the first with a time axis, else the first. */
  block: z.number().int().min(1).max(10_000).optional(),
}).strict();
type PreviewChoices = z.infer<typeof choicesSchema>;

function parseChoices(text: string): PreviewChoices {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest('choices: must be JSON');
  }
  const result = choicesSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw badRequest(`choices${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
  }
  return result.data;
}

/** The stream's first `limit` bytes; the rest is drained so the request completes. */
async function readFirstBytes(stream: Readable, limit: number): Promise<{ bytes: Buffer; total: number }> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (kept >= limit) continue;
    const piece = chunk.subarray(0, limit - kept);
    chunks.push(piece);
    kept += piece.length;
  }
  return { bytes: Buffer.concat(chunks, kept), total };
}

export async function csvPreviewRoutes(app: App, deps: AppDeps): Promise<void> {
  app.post('/api/v1/csv-previews', {
    config: { access: 'create' },
    schema: {
      summary: 'Detect the layout of a CSV or text export (multipart: the `file`, optionally a `choices` JSON field)',
      description: `Reads at most the first ${LAYOUT_PREVIEW_BYTES / (1024 * 1024)} MiB of the file and answers its encoding, delimiter, header line `
        + '(after a preamble), where the table ends, the time column and its format, the start time the preamble states, units in '
        + 'the headers, suggested instruments and notices about layouts read only in part. `choices` (encoding, delimiter, '
        + 'header_line, time_column, prefer_day_first, and no_header with column_names for a table without a header row) replaces what would be detected. An Excel workbook (.xlsx) is read as the CSV '
        + 'text of one sheet (`sheet` in `choices`, else the first) and the answer lists its `sheets`. A file of several read blocks '
        + 'lists them in `blocks` and reads one (`block` in `choices`, else the first with a time axis); an endpoint plate grid is '
        + 'answered as one reading per well (`grid`; headers `Read time`, A1..H12), uploaded with `plate_grid` in the reading. Nothing is stored.',
    },
  }, async (request, reply) => {
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a file');
    let choices: PreviewChoices = {};
    let file: { name: string; bytes: Buffer; total: number; sheets: SpreadsheetSheets | null } | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === 'choices') choices = parseChoices(String(part.value));
        continue;
      }
      if (part.fieldname !== 'file' || file) {
        part.file.resume();
        continue;
      }
      const problem = checkCsvFile({ name: part.filename ?? '', size: 1, type: part.mimetype }, { maxBytes: deps.env.CSV_MAX_BYTES });
      if (problem) {
        part.file.resume();
        throw badRequest(problem);
      }
      if (isSpreadsheetName(part.filename ?? '')) {
        // A workbook previews as the CSV text of its sheet, which is what an upload of it stores.
        const head = await spreadsheetHead(part.file, choices.sheet ?? null, LAYOUT_PREVIEW_BYTES);
        file = { name: part.filename ?? '', bytes: head.bytes, total: head.bytes.length + (head.complete ? 0 : 1), sheets: head.sheets };
        continue;
      }
      const { bytes, total } = await readFirstBytes(part.file, LAYOUT_PREVIEW_BYTES);
      file = { name: part.filename ?? '', bytes, total, sheets: null };
    }
    if (!file) throw badRequest(TIME_SERIES_MESSAGES.fileRequired);
    if (file.total === 0) throw badRequest(CSV_MESSAGES.fileEmpty);
    const outcome = detectCsvLayout(file.bytes, {
      partial: file.total > file.bytes.length, maxColumns: deps.env.CSV_MAX_COLUMNS,
      encoding: choices.encoding, delimiter: choices.delimiter, header_line: choices.header_line,
      time_column: choices.time_column, preferDayFirst: choices.prefer_day_first, block: choices.block,
      no_header: choices.no_header ?? (choices.column_names !== undefined ? true : undefined), column_names: choices.column_names,
    });
    if (!outcome.ok) throw badRequest(outcome.message);
    const sheets = file.sheets ? { sheets: file.sheets.names, sheet: file.sheets.chosen } : {};
    return reply.send({ file_name: file.name, bytes_read: file.bytes.length, bytes_max: LAYOUT_PREVIEW_BYTES, ...sheets, ...outcome.layout });
  });
}
