/**
 * Leases give each connection to one connector at a time: a Redis key per connection holding the
 * connector's id, set only when free and kept alive by its holder. A connector killed with -9 stops
 * renewing, so its connections move to another once CONNECTOR_LEASE_MS passes. A holder that cannot
 * renew (Redis away) stops its sources before the lease can have passed to another, so two
 * connectors never read one source into one buffer.
 */
import type { Redis } from '@bioprocess/shared/server/redis';
import { integrationKeys } from '@bioprocess/shared/server/integration-protocol';

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class Leases {
  constructor(private readonly redis: Redis, private readonly prefix: string, readonly connectorId: string, readonly leaseMs: number) {}

  async acquire(connectionId: number): Promise<boolean> {
    return (await this.redis.set(integrationKeys.lease(this.prefix, connectionId), this.connectorId, 'PX', this.leaseMs, 'NX')) === 'OK';
  }

  async renew(connectionId: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW, 1, integrationKeys.lease(this.prefix, connectionId), this.connectorId, String(this.leaseMs))) === 1;
  }

  async release(connectionId: number): Promise<void> {
    await this.redis.eval(RELEASE, 1, integrationKeys.lease(this.prefix, connectionId), this.connectorId);
  }

  /** The connector holding the connection, or null when it is free. */
  async holder(connectionId: number): Promise<string | null> {
    return this.redis.get(integrationKeys.lease(this.prefix, connectionId));
  }

  /** Says this connector is alive; answers how many are, so each takes its share of the connections. */
  async heartbeat(): Promise<number> {
    await this.redis.set(integrationKeys.connector(this.prefix, this.connectorId), '1', 'PX', this.leaseMs);
    let count = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', integrationKeys.connectorPattern(this.prefix), 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return Math.max(1, count);
  }

  async leave(): Promise<void> {
    await this.redis.del(integrationKeys.connector(this.prefix, this.connectorId));
  }
}
