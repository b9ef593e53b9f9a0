/** A connection's status as the api answers it: what its connector last published to Redis, else what the row says. */
import type { Redis } from '@bioprocess/shared/server/redis';
import type { ConnectionStatus, IntegrationConnection } from '@bioprocess/shared/integrations';
import { integrationKeys, publishedStatusSchema } from '@bioprocess/shared/server/integration-protocol';
import type { Logger } from '@bioprocess/shared/server/logger';

export async function readConnectionStatus(redis: Redis, prefix: string, connection: IntegrationConnection, logger: Logger): Promise<ConnectionStatus> {
  const fallback: ConnectionStatus = {
    state: connection.enabled ? 'disconnected' : 'disabled',
    last_message_at: null, messages_per_minute: 0, points_per_minute: 0, errors: [],
    buffered_bytes: 0, buffer_limit_bytes: connection.buffer_limit_bytes,
  };
  let text: string | null;
  try {
    text = await redis.get(integrationKeys.status(prefix, connection.id));
  } catch (error) {
    logger.warn({ err: error }, 'connection status unreadable');
    return { ...fallback, errors: [{ at: new Date().toISOString(), message: 'The status store (Redis) cannot be reached.' }] };
  }
  if (!text) return fallback;
  const parsed = publishedStatusSchema.safeParse(JSON.parse(text));
  if (!parsed.success) return fallback;
  const { connector_id: _connector, published_at: _published, ...status } = parsed.data;
  // A connector still draining a connection the admin just disabled says so with its buffer.
  return { ...status, state: connection.enabled ? status.state : 'disabled', buffer_limit_bytes: connection.buffer_limit_bytes };
}
