/**
 * What the api and the connectors exchange through Redis: the browse queue (the api asks, the
 * connector holding the connection answers), each connection's status (the connector publishes it,
 * the api reads it) and the leases that give every connection to one connector at a time. All keys
 * live under QUEUE_PREFIX, so stacks and test suites sharing a Redis never see each other's.
 */
import { z } from 'zod';
import { browseItemSchema, connectionStatusSchema } from '../integrations.ts';

export const INTEGRATION_BROWSE_QUEUE = 'integration-browse';
export const INTEGRATION_BROWSE_JOB = 'browse';

export const browseJobSchema = z.object({
  connection_id: z.number().int().positive(),
  organization_id: z.number().int().positive(),
  node_id: z.string().nullable(),
});
export type BrowseJob = z.infer<typeof browseJobSchema>;

/** A browse's answer: the items, or the source's own error (the api passes it on as a 400). */
export const browseResultSchema = z.union([
  z.object({ items: z.array(browseItemSchema) }),
  z.object({ error: z.string() }),
]);
export type BrowseResult = z.infer<typeof browseResultSchema>;

/** The status a connector publishes; the api answers it with the connection's own limit and state. */
export const publishedStatusSchema = connectionStatusSchema.extend({
  connector_id: z.string(),
  published_at: z.string(),
});
export type PublishedStatus = z.infer<typeof publishedStatusSchema>;

export const integrationKeys = {
  status: (prefix: string, connectionId: number) => `${prefix}:integration:status:${connectionId}`,
  lease: (prefix: string, connectionId: number) => `${prefix}:integration:lease:${connectionId}`,
  /** One per live connector, expiring with its heartbeat: how many share the connections. */
  connector: (prefix: string, connectorId: string) => `${prefix}:integration:connector:${connectorId}`,
  connectorPattern: (prefix: string) => `${prefix}:integration:connector:*`,
};
