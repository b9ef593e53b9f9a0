/**
 * Paging of list endpoints. Lists answer a plain JSON array (what the console reads) and carry the
 * total number of matching rows in a header, so a client can page without a wrapper object.
 */
import { z } from 'zod';

/** Large enough that the console gets everything it shows in one call for a typical lab. */
export const LIST_LIMIT_DEFAULT = 1000;
/** Bounds the work and the response size of one call (100,000 runs are paged, never sent at once). */
export const LIST_LIMIT_MAX = 10000;
export const TOTAL_COUNT_HEADER = 'X-Total-Count';

export const LIST_QUERY_DESCRIPTION =
  `Lists are ordered and paged with \`limit\` (default ${LIST_LIMIT_DEFAULT}, maximum ${LIST_LIMIT_MAX}) ` +
  `and \`offset\` (default 0); the number of matching rows is in the \`${TOTAL_COUNT_HEADER}\` response header.`;

export const listQueryShape = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_LIMIT_MAX)
    .default(LIST_LIMIT_DEFAULT)
    .describe(`Maximum number of rows (default ${LIST_LIMIT_DEFAULT}, maximum ${LIST_LIMIT_MAX}).`),
  offset: z.coerce.number().int().min(0).default(0).describe('Number of rows to skip (default 0).'),
};

export const listQuerySchema = z.object(listQueryShape);
export type ListQuery = z.infer<typeof listQuerySchema>;
