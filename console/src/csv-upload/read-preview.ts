/**
 * Reads the preview of a chosen CSV from the FIRST PART of the file only (File.slice): the file
 * checks, decoding (UTF-8 or Latin-1), the content checks, and the shared preview parser. A 1 GiB file
 * previews as fast as a small one; the whole file is only ever read by the server. No browser CSV
 * library: the server reads with these same functions, so the preview's column names are the ones the
 * upload maps (docs/csv.md says what Papa Parse did with the DASware export).
 */
import {
  CSV_LIMITS, CSV_MESSAGES, CSV_TOAST_TITLES, CsvLimitError, checkCsvContent, checkCsvFile, dasWareTimeBase, decodeCsvBytes, isMultiSectionCsv, parseCsvPreview,
  readTimezoneBiasMinutes, type CsvPreview, type FileTimeBase,
} from '@bioprocess/shared/csv/index';

/** Bytes read for the preview and the timestamp detection. */
export const PREVIEW_BYTES = 256 * 1024;
/** Rows read for detection: the 20 date samples format detection uses (the table shows the first 10). */
export const DETECTION_ROWS = CSV_LIMITS.dateDetectionSampleSize;

export type PreviewOutcome =
  | {
    ok: true; preview: CsvPreview; partial: boolean; encoding: string;
    /** Every data row of the bytes read (a long-format key column's keys come from them). */
    sampleRows: string[][];
    /** Where the file says its timestamps are (DASware), else null. */
    timeBase: FileTimeBase | null;
  }
  | { ok: false; title: string; message: string };

export interface PreviewSource {
  name: string;
  size: number;
  type: string;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

export async function readCsvPreview(file: PreviewSource, maxBytes: number = CSV_LIMITS.defaultMaxBytes): Promise<PreviewOutcome> {
  const fileProblem = checkCsvFile({ name: file.name, size: file.size, type: file.type }, { maxBytes });
  if (fileProblem) return { ok: false, title: CSV_TOAST_TITLES.invalidFile, message: fileProblem };

  const partial = file.size > PREVIEW_BYTES;
  let text: string;
  let encoding: string;
  try {
    const bytes = new Uint8Array(await file.slice(0, Math.min(file.size, PREVIEW_BYTES)).arrayBuffer());
    ({ text, encoding } = decodeCsvBytes(bytes, { partial }));
  } catch (error) {
    console.error('Failed to read the CSV file', error);
    return { ok: false, title: CSV_TOAST_TITLES.parseError, message: CSV_MESSAGES.parseFailed };
  }

  const contentProblem = checkCsvContent(text);
  if (contentProblem) return { ok: false, title: CSV_TOAST_TITLES.invalidContent, message: contentProblem };

  let preview: CsvPreview | null;
  let sampleRows: string[][];
  try {
    preview = parseCsvPreview(text, { partial, maxRows: DETECTION_ROWS });
    if (!preview || preview.headers.length === 0) return { ok: false, title: CSV_TOAST_TITLES.parseError, message: CSV_MESSAGES.parseFailed };
    // Every row of the bytes read, unpadded: its cells are read with `?? ''`.
    sampleRows = parseCsvPreview(text, { partial, maxRows: Number.POSITIVE_INFINITY, padRows: false })?.rows ?? preview.rows;
  } catch (error) {
    // A header wider than the column limit, or a line longer than the line limit: the upload would fail the same way.
    if (error instanceof CsvLimitError) return { ok: false, title: CSV_TOAST_TITLES.invalidContent, message: error.message };
    throw error;
  }
  const timeBase = isMultiSectionCsv(text) ? dasWareTimeBase(readTimezoneBiasMinutes(text)) : null;
  return { ok: true, preview, partial, encoding, sampleRows, timeBase };
}
