/** SWR on top of the API client: the key is the request path; null skips the request. */
import useSWR, { type SWRConfiguration, type SWRResponse } from 'swr';
import type { ZodType } from 'zod';
import { apiRequest } from './client.ts';

export function useApi<T>(path: string | null, schema?: ZodType<T> | ZodType, config?: SWRConfiguration<T, Error>): SWRResponse<T, Error> {
  return useSWR<T, Error>(path, (key: string) => apiRequest<T>('GET', key, undefined, { schema }), config);
}
