/**
 * An Excel workbook chosen in the upload wizard becomes the CSV text of one of its sheets, converted
 * by the api (POST /api/v1/spreadsheet-conversions, read as a stream there). From then on the wizard
 * treats that text as the chosen file: the preview, the detection, the file's time range and the
 * upload all work on it exactly as on a text export.
 */
import { getToken } from '../auth/session-store.ts';
import { readJsonBody, serverErrorOf } from '../api/client.ts';
import { CSV_TOAST_TITLES } from '@bioprocess/shared/csv/index';

export interface ConvertedWorkbook {
  ok: true;
  /** The sheet's CSV text, named after the workbook and the sheet. */
  csv: File;
  sheets: string[];
  sheet: string;
}

export type WorkbookConversion = ConvertedWorkbook | { ok: false; title: string; message: string };

function headerList(value: string | null): string[] {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(decodeURIComponent(value));
    return Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === 'string') : [];
  } catch {
    return [];
  }
}

/** The CSV of `sheet` (the first when null) of a workbook, or why it could not be read. */
export async function convertWorkbook(workbook: File, sheet: string | null, signal?: AbortSignal): Promise<WorkbookConversion> {
  const form = new FormData();
  if (sheet) form.append('sheet', sheet);
  form.append('file', workbook, workbook.name);
  const token = getToken();
  let response: Response;
  try {
    response = await fetch('/api/v1/spreadsheet-conversions', { method: 'POST', body: form, signal, headers: token ? { Authorization: `Bearer ${token}` } : {} });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    return { ok: false, title: CSV_TOAST_TITLES.parseError, message: 'Network error while reading the workbook' };
  }
  if (!response.ok) {
    const body = await readJsonBody(response);
    return { ok: false, title: CSV_TOAST_TITLES.invalidFile, message: serverErrorOf(body) ?? `The workbook could not be read (${response.status})` };
  }
  let text: Blob;
  try {
    text = await response.blob();
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    // The server stops a sheet whose text outgrows the largest upload part-way through the answer.
    return { ok: false, title: CSV_TOAST_TITLES.invalidFile, message: 'The sheet could not be read in full: it may be larger than the largest upload allowed.' };
  }
  const sheets = headerList(response.headers.get('spreadsheet-sheets'));
  const chosen = decodeURIComponent(response.headers.get('spreadsheet-sheet') ?? '') || sheets[0] || 'Sheet1';
  const csv = new File([text], `${workbook.name} - ${chosen}.csv`, { type: 'text/csv' });
  return { ok: true, csv, sheets: sheets.length > 0 ? sheets : [chosen], sheet: chosen };
}
