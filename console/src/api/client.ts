/**
 * The authenticated request helper: bearer token from the stored session,
 * relative paths on the console's own origin, JSON bodies sent as given (callers send snake_case),
 * 204/empty/non-JSON answers as null, response keys converted to camelCase, and the product's
 * fixed error texts. Any 401 signs the user out. A read answered 503 with Retry-After (the api's
 * "still being summarised" while a moment-old upload's rollups are computed) is asked again after the
 * time it names, a few times, before its error is shown: the answer is only late, not wrong.
 */
import type { ZodType } from 'zod';
import { REVIEW_MESSAGES } from '@bioprocess/shared/run-review';
import { clearSession, getToken } from '../auth/session-store.ts';

const SESSION_ENDED_FOR_INACTIVITY = REVIEW_MESSAGES.sessionInactive;
import { toCamelCase } from './case.ts';
import { changeReasonHeadersFor } from './change-reason.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const NO_TOKEN_MESSAGE = 'No access token available';
export const AUTHENTICATION_REQUIRED_MESSAGE = 'Authentication required';

/** A failed call to the api, from the JSON client or the upload's XMLHttpRequest alike; status 0 when no answer came. */
export class ApiError extends Error {
  readonly status: number;
  /** The answer's JSON body as sent (snake_case), for errors that carry more than their message (the samples grid's bad cells). */
  readonly body: unknown;

  constructor(message: string, status: number, body: unknown = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

export interface ApiRequestOptions<T> {
  /**
   * Validates the body exactly as the server sent it (the snake_case wire shape, e.g. the zod schemas
   * in `@bioprocess/shared`), before the keys are converted to camelCase. A mismatch throws the
   * ZodError: the answer does not parse.
   */
  schema?: ZodType<T> | ZodType;
  signal?: AbortSignal;
}

/** Everything the client needs from the outside world, so tests can inject a fake fetch. */
export interface ApiClientDeps {
  fetch: typeof fetch;
  getToken: () => string | null;
  /** Called on any 401 with the server's message (it may say why the session ended). */
  onUnauthorized: (message: string | null) => void;
  /** Prefix for relative paths; the console is served by the api on the same origin. */
  baseUrl?: string;
  /** Headers a change carries (its reason for change, asked of the person when the organisation wants one). */
  changeHeaders?: (method: HttpMethod, path: string) => Promise<Record<string, string>>;
  /** Waits before a read is asked again (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
}

/** How often a read answered 503 with Retry-After is asked again, and the longest wait taken from the header. */
export const READ_RETRIES = 3;
const LONGEST_RETRY_WAIT_MS = 10_000;

/** The wait a 503's Retry-After asks for (seconds), or null when it names none. */
export function retryAfterMs(response: Response): number | null {
  if (response.status !== 503) return null;
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, LONGEST_RETRY_WAIT_MS) : null;
}

const waitFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reads a body as JSON; empty or non-JSON bodies (and 204) give null. */
export async function readJsonBody(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const text = await response.text();
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The server's `{ "error": "..." }` text, when there is one. */
export function serverErrorOf(body: unknown): string | null {
  if (body && typeof body === 'object' && 'error' in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === 'string' && error.trim()) return error;
  }
  return null;
}

export function createApiClient(deps: ApiClientDeps) {
  async function request<T>(method: HttpMethod, path: string, body?: unknown, options: ApiRequestOptions<T> = {}): Promise<T> {
    const token = deps.getToken();
    if (!token) throw new ApiError(NO_TOKEN_MESSAGE, 0);

    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
    if (method !== 'GET' && deps.changeHeaders) Object.assign(headers, await deps.changeHeaders(method, path));
    const init: RequestInit = { method, headers, signal: options.signal };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const url = /^https?:\/\//.test(path) ? path : `${deps.baseUrl ?? ''}${path}`;
    let response = await deps.fetch(url, init);
    for (let retry = 1; method === 'GET' && retry <= READ_RETRIES && !options.signal?.aborted; retry += 1) {
      const wait = retryAfterMs(response);
      if (wait === null) break;
      await (deps.sleep ?? waitFor)(wait);
      if (options.signal?.aborted) break;
      response = await deps.fetch(url, init);
    }
    const payload = await readJsonBody(response);

    if (response.status === 401) {
      deps.onUnauthorized(serverErrorOf(payload));
      throw new ApiError(AUTHENTICATION_REQUIRED_MESSAGE, 401);
    }
    if (!response.ok) {
      throw new ApiError(serverErrorOf(payload) ?? `API request failed: ${response.statusText}`, response.status, payload);
    }
    const validated = options.schema && payload !== null ? options.schema.parse(payload) : payload;
    return toCamelCase<T>(validated);
  }

  return {
    request,
    get: <T>(path: string, options?: ApiRequestOptions<T>) => request<T>('GET', path, undefined, options),
    post: <T>(path: string, body?: unknown, options?: ApiRequestOptions<T>) => request<T>('POST', path, body, options),
    put: <T>(path: string, body?: unknown, options?: ApiRequestOptions<T>) => request<T>('PUT', path, body, options),
    del: <T>(path: string, body?: unknown, options?: ApiRequestOptions<T>) => request<T>('DELETE', path, body, options),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** The console's client: the browser's fetch and the stored session. */
export const api: ApiClient = createApiClient({
  fetch: (input, init) => globalThis.fetch(input, init),
  getToken,
  // Only a reason the user can act on is kept for the sign-in page; any other 401 signs out silently.
  onUnauthorized: (message) => clearSession(message === SESSION_ENDED_FOR_INACTIVITY ? message : undefined),
  changeHeaders: changeReasonHeadersFor,
});

export function apiRequest<T>(method: HttpMethod, path: string, body?: unknown, options?: ApiRequestOptions<T>): Promise<T> {
  return api.request<T>(method, path, body, options);
}
