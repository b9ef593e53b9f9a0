/**
 * The server-side CSV upload: the multipart POST (the `mapping` field first, then the `file`, so the
 * server can refuse a bad mapping before storing a byte; it takes any order), with upload progress from XMLHttpRequest, and
 * the ingest job followed through its server-sent events (read with fetch so the bearer token travels
 * in a header), falling back to polling the job when the stream is unavailable.
 */
import { ingestJobStatusSchema, type CsvMapping, type IngestJobStatus } from '@bioprocess/shared/timeseries';
import { getToken } from '../auth/session-store.ts';
import { ApiError, serverErrorOf } from '../api/client.ts';

export interface UploadProgressEvent {
  loaded: number;
  total: number;
}

/** Posts the file into an existing unit operation; resolves with the ingest job's id. */
export async function postCsvUpload(
  unitOperationId: number, file: Blob & { name?: string }, mapping: CsvMapping,
  onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal,
): Promise<string> {
  const form = new FormData();
  form.append('mapping', JSON.stringify(mapping));
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
  onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal,
): Promise<{ unitOperation: unknown; jobId: string }> {
  const form = new FormData();
  form.append('unit_operation', JSON.stringify(unitOperation));
  form.append('mapping', JSON.stringify(mapping));
  form.append('file', file, file.name ?? 'upload.csv');
  const { jobId, body } = await postMultipart('/api/v1/unit-operations/csv-uploads', form, file.size, onProgress, signal);
  return { unitOperation: (body as { unit_operation?: unknown }).unit_operation, jobId };
}

function postMultipart(
  url: string, form: FormData, size: number, onProgress?: (event: UploadProgressEvent) => void, signal?: AbortSignal,
): Promise<{ jobId: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    const token = getToken();
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
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

/**
 * Splits a server-sent-event text buffer into complete events; returns the events' data payloads and
 * the unfinished rest.
 */
export function parseSseBuffer(buffer: string): { events: { event: string; data: string }[]; rest: string } {
  const normalised = buffer.replace(/\r\n/g, '\n');
  const blocks = normalised.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events: { event: string; data: string }[] = [];
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

async function fetchJob(jobId: string, signal?: AbortSignal): Promise<IngestJobStatus> {
  const response = await fetch(`/api/v1/ingest-jobs/${encodeURIComponent(jobId)}`, {
    headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'application/json' }, signal,
  });
  const body = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) throw new ApiError(serverErrorOf(body) ?? `Failed to read the upload job (${response.status})`, response.status);
  return ingestJobStatusSchema.parse(body);
}

async function followEvents(jobId: string, onUpdate: (status: IngestJobStatus) => void, signal?: AbortSignal): Promise<IngestJobStatus | null> {
  const response = await fetch(`/api/v1/ingest-jobs/${encodeURIComponent(jobId)}/events`, {
    headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'text/event-stream' }, signal,
  });
  if (!response.ok || !response.body) return null;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let last: IngestJobStatus | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const parsed = parseSseBuffer(buffer);
    buffer = parsed.rest;
    for (const event of parsed.events) {
      const status = ingestJobStatusSchema.safeParse(JSON.parse(event.data));
      if (!status.success) continue;
      last = status.data;
      onUpdate(last);
      if (isFinished(last)) {
        await reader.cancel().catch(() => undefined);
        return last;
      }
    }
  }
  return last && isFinished(last) ? last : null;
}

const POLL_INTERVAL_MS = 1000;

/** Follows a job to its end, reporting every change; resolves with the finished status. */
export async function watchIngestJob(jobId: string, onUpdate: (status: IngestJobStatus) => void, signal?: AbortSignal): Promise<IngestJobStatus> {
  try {
    const finished = await followEvents(jobId, onUpdate, signal);
    if (finished) return finished;
  } catch (error) {
    if (signal?.aborted) throw error;
    // The stream broke (proxy, network): polling below still gets the job to its end.
    console.warn('Ingest job event stream unavailable; polling instead', error);
  }
  for (;;) {
    const status = await fetchJob(jobId, signal);
    onUpdate(status);
    if (isFinished(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
