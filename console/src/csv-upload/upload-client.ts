/**
 * The server-side CSV upload: the multipart POST (the `mapping` field first, then the `file`, so the
 * server can refuse a bad mapping before storing a byte; it takes any order), with upload progress from XMLHttpRequest, and
 * the ingest job followed through its server-sent events (api/job-events.ts).
 */
import { changeReasonHeadersFor } from '../api/change-reason.ts';
import type { DuplicatePolicy } from '@bioprocess/shared/ingest/requests';
import { ingestJobStatusSchema, type CsvMapping, type IngestJobStatus } from '@bioprocess/shared/timeseries';
import { getToken } from '../auth/session-store.ts';
import { ApiError, serverErrorOf } from '../api/client.ts';
import { watchJob } from '../api/job-events.ts';

export interface UploadProgressEvent {
  loaded: number;
  total: number;
}

/** How rows sharing a time are treated, and which cells mean "no value" (the multipart fields beside the mapping). */
export interface ReadingChoices {
  duplicates: DuplicatePolicy;
  missingValues: string[];
}

function appendChoices(form: FormData, choices: ReadingChoices | undefined): void {
  if (!choices) return;
  form.append('duplicates', choices.duplicates);
  if (choices.missingValues.length > 0) form.append('missing_values', JSON.stringify(choices.missingValues));
}

/** Posts the file into an existing unit operation; resolves with the ingest job's id. */
export async function postCsvUpload(
  unitOperationId: number, file: Blob & { name?: string }, mapping: CsvMapping,
  onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal, choices?: ReadingChoices,
): Promise<string> {
  const form = new FormData();
  form.append('mapping', JSON.stringify(mapping));
  appendChoices(form, choices);
  form.append('file', file, file.name ?? 'upload.csv');
  const { jobId } = await postMultipart(`/api/v1/unit-operations/${unitOperationId}/csv-uploads`, form, file.size, onProgress, signal);
  return jobId;
}

/**
 * Creates a unit operation together with its first upload (one act: the server removes it again if
 * the upload fails); resolves with the created unit operation (wire form) and the ingest job's id.
 */
export async function postUnitOperationWithCsv(
  unitOperation: Record<string, unknown>, file: Blob & { name?: string }, mapping: CsvMapping,
  onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal, choices?: ReadingChoices,
): Promise<{ unitOperation: unknown; jobId: string }> {
  const form = new FormData();
  form.append('unit_operation', JSON.stringify(unitOperation));
  form.append('mapping', JSON.stringify(mapping));
  appendChoices(form, choices);
  form.append('file', file, file.name ?? 'upload.csv');
  const { jobId, body } = await postMultipart('/api/v1/unit-operations/csv-uploads', form, file.size, onProgress, signal);
  return { unitOperation: (body as { unit_operation?: unknown }).unit_operation, jobId };
}

async function postMultipart(
  url: string, form: FormData, size: number, onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal,
): Promise<{ jobId: string; body: Record<string, unknown> }> {
  const reasonHeaders = await changeReasonHeadersFor('POST', url);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    const token = getToken();
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    for (const [name, value] of Object.entries(reasonHeaders)) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.onprogress = (event) => onProgress?.({ loaded: event.loaded, total: event.lengthComputable ? event.total : size });
    xhr.onerror = () => reject(new ApiError('Network error while uploading the file', 0));
    xhr.onabort = () => reject(new DOMException('Upload aborted', 'AbortError'));
    xhr.onload = () => {
      let body: unknown;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        body = null;
      }
      if (xhr.status < 200 || xhr.status >= 300) {
        reject(new ApiError(serverErrorOf(body) ?? `Upload failed (${xhr.status})`, xhr.status));
        return;
      }
      const record = (body ?? {}) as { id?: unknown; job_id?: unknown };
      const id = xhr.getResponseHeader('x-ingest-job-id') ?? record.job_id ?? record.id;
      if (typeof id !== 'string' && typeof id !== 'number') {
        reject(new ApiError('The server did not return an ingest job', xhr.status));
        return;
      }
      resolve({ jobId: String(id), body: (body ?? {}) as Record<string, unknown> });
    };
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

export function isFinished(status: Pick<IngestJobStatus, 'state'>): boolean {
  return status.state === 'completed' || status.state === 'failed';
}

/** Follows an ingest job to its end, reporting every change; resolves with the finished status. */
export function watchIngestJob(jobId: string, onUpdate: (status: IngestJobStatus) => void, signal?: AbortSignal): Promise<IngestJobStatus> {
  return watchJob({
    url: `/api/v1/ingest-jobs/${encodeURIComponent(jobId)}`, schema: ingestJobStatusSchema, finished: isFinished, readFailure: 'Failed to read the upload job',
  }, onUpdate, signal);
}
