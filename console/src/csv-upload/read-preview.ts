/**
 * Reads the preview of a chosen file from its FIRST PART only (File.slice): the file checks, then the
 * shared layout detection the api's POST /api/v1/csv-previews runs (detectCsvLayout: encoding, binary
 * content, delimiter, the header after a preamble, the table's end, the time column, the start the
 * preamble states, notices). A 1 GiB file previews as fast as a small one; the whole file is only ever
 * read by the server, cut to the same table with the choices the preview shows (the mapping's
 * `reading`). No browser CSV library: docs/csv.md says what Papa Parse did with the DASware export.
 */
import {
  CSV_LIMITS, CSV_MESSAGES, CSV_TOAST_TITLES, LAYOUT_PREVIEW_BYTES, checkCsvFile, dasWareTimeBase, decodeCsvBytes, detectCsvLayout,
  fitRowToWidth, readTimezoneBiasMinutes, truncateRowToWidth, type CsvLayout, type CsvPreview, type CsvReadingChoices, type FileTimeBase,
} from '@bioprocess/shared/csv/index';

/** Bytes read for the preview and the detection: the same bound as the api's preview. */
export const PREVIEW_BYTES = LAYOUT_PREVIEW_BYTES;
/** Rows read for detection: the 20 date samples format detection uses (the table shows the first 10). */
export const DETECTION_ROWS = CSV_LIMITS.dateDetectionSampleSize;

export type PreviewOutcome =
  | {
    ok: true; preview: CsvPreview; partial: boolean; encoding: string;
    /** Every data row of the bytes read (a long-format key column's keys come from them). */
    sampleRows: string[][];
    /** Where the file says its timestamps are (DASware), else null. */
    timeBase: FileTimeBase | null;
    /** The detected layout (what the api's preview answers for these bytes). */
    layout: CsvLayout;
  }
  | { ok: false; title: string; message: string };

export interface PreviewSource {
  name: string;
  size: number;
  type: string;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

export async function readCsvPreview(
  file: PreviewSource, maxBytes: number = CSV_LIMITS.defaultMaxBytes, choices: CsvReadingChoices = {},
): Promise<PreviewOutcome> {
  const fileProblem = checkCsvFile({ name: file.name, size: file.size, type: file.type }, { maxBytes });
  if (fileProblem) return { ok: false, title: CSV_TOAST_TITLES.invalidFile, message: fileProblem };

  const partial = file.size > PREVIEW_BYTES;
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await file.slice(0, Math.min(file.size, PREVIEW_BYTES)).arrayBuffer());
  } catch (error) {
    console.error('Failed to read the CSV file', error);
    return { ok: false, title: CSV_TOAST_TITLES.parseError, message: CSV_MESSAGES.parseFailed };
  }
  const detected = detectCsvLayout(bytes, { ...choices, partial, maxRows: Number.POSITIVE_INFINITY });
  if (!detected.ok) return { ok: false, title: CSV_TOAST_TITLES.invalidContent, message: detected.message };
  const layout = detected.layout;
  const width = layout.headers.length;
  // Every row of the bytes read, unpadded: its cells are read with `?? ''`.
  const sampleRows = layout.rows.map((row) => truncateRowToWidth(row, width));
  const preview: CsvPreview = {
    delimiter: layout.delimiter, section: layout.section, rawHeaders: layout.raw_headers, headers: layout.headers,
    rows: layout.rows.slice(0, DETECTION_ROWS).map((row) => fitRowToWidth([...row], width)), rowsParsed: layout.rows_parsed,
  };
  const timeBase = layout.section ? dasWareTimeBase(readTimezoneBiasMinutes(decodeCsvBytes(bytes, { partial, encoding: layout.encoding }).text)) : null;
  return { ok: true, preview, partial, encoding: layout.encoding, sampleRows, timeBase, layout: { ...layout, rows: layout.rows.slice(0, CSV_LIMITS.previewRows) } };
}
