/**
 * The Integrations page's data: connections, their status (refreshed every few seconds), their
 * mappings and browsing, each under the api's path so a change revalidates exactly what it touched.
 */
import { z } from 'zod';
import {
  browseResponseSchema, connectionStatusSchema, integrationConnectionSchema, integrationMappingSchema,
  type ConnectionStatus, type IntegrationConnection, type IntegrationMapping,
} from '@bioprocess/shared/integrations';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import type { Camelize } from '../entities/types.ts';

export const CONNECTIONS_PATH = '/api/v1/integrations/connections';
export const connectionPath = (id: number) => `${CONNECTIONS_PATH}/${id}`;
export const statusPath = (id: number) => `${connectionPath(id)}/status`;
export const mappingsPath = (id: number) => `${connectionPath(id)}/mappings`;

/** How often the status of a connection is asked again while the page is open. */
export const STATUS_REFRESH_MS = 3_000;

export type Connection = Camelize<IntegrationConnection>;
export type Mapping = Camelize<IntegrationMapping>;
export type Status = Camelize<ConnectionStatus>;
export type BrowseItem = Camelize<z.infer<typeof browseResponseSchema>['items'][number]>;

export function useConnections() {
  return useApi<Connection[]>(CONNECTIONS_PATH, z.array(integrationConnectionSchema));
}

export function useConnectionStatus(id: number | null) {
  return useApi<Status>(id === null ? null : statusPath(id), connectionStatusSchema, { refreshInterval: STATUS_REFRESH_MS });
}

export function useMappings(id: number | null) {
  return useApi<Mapping[]>(id === null ? null : mappingsPath(id), z.array(integrationMappingSchema));
}

/** A node's children (OPC UA) or the topics seen lately (MQTT), asked of a connector through the api. */
export async function browse(connectionId: number, nodeId: string | null): Promise<BrowseItem[]> {
  const answer = await apiRequest<{ items: BrowseItem[] }>('POST', `${connectionPath(connectionId)}/browse`, { node_id: nodeId }, { schema: browseResponseSchema });
  return answer.items;
}
