/**
 * The requests of the report import dialog: the detected layout of the chosen file (the api's
 * POST /api/v1/csv-previews, the detection the upload wizard shows) and the import itself, as a dry
 * run or for real (POST /api/v1/unit-operations/{id}/sample-imports). Both are multipart; answers are
 * kept in the api's snake_case, which the shared contracts describe.
 */
import type { CsvLayout } from '@bioprocess/shared/csv/index';
import type { SampleImportPreview, SampleReportMappingInput } from '@bioprocess/shared/samples-import';
import { SAMPLE_REPORT_MAPPING_FIELD } from '@bioprocess/shared/samples-import';
import { getToken } from '../auth/session-store.ts';
import { ApiError, readJsonBody, serverErrorOf } from '../api/client.ts';
import { changeReasonHeadersFor } from '../api/change-reason.ts';

export type ReportLayout = CsvLayout & { file_name: string };

async function postForm<T>(url: string, form: FormData, failure: string): Promise<T> {
  const token = getToken();
  const headers: Record<string, string> = { Accept: 'application/json', ...(await changeReasonHeadersFor('POST', url)) };
  if (token) headers.Authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', body: form, headers });
  } catch {
    throw new ApiError(`Network error: ${failure.toLowerCase()}`, 0);
  }
  const body = await readJsonBody(response);
  if (!response.ok) throw new ApiError(serverErrorOf(body) ?? `${failure} (${response.status})`, response.status, body);
  return body as T;
}

/** The layout the api detects in the file; `headerless` asks for the first line as the header, to be read as data. */
export function previewReport(file: File, headerless: boolean): Promise<ReportLayout> {
  const form = new FormData();
  if (headerless) form.append('choices', JSON.stringify({ header_line: 1 }));
  form.append('file', file, file.name);
  return postForm('/api/v1/csv-previews', form, 'The report could not be read');
}

export function importReport(unitOperationId: number, mapping: SampleReportMappingInput, file: File, dryRun: boolean): Promise<SampleImportPreview> {
  const form = new FormData();
  form.append(SAMPLE_REPORT_MAPPING_FIELD, JSON.stringify(mapping));
  form.append('file', file, file.name);
  return postForm(`/api/v1/unit-operations/${unitOperationId}/sample-imports${dryRun ? '?dry_run=true' : ''}`, form, 'The report was not imported');
}
