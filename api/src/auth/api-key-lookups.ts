/**
 * API keys looked up together. Instrument feeds post with their keys many times a second: a key found
 * live is then served from memory while no change to it is heard (platform/access-caches.ts: a
 * revocation through this api takes effect before its answer, one made elsewhere the moment its
 * notification arrives), and looked up again every 30 seconds at least. Requests that ask while a
 * lookup is on its way share the next one (one statement for all the keys asked for).
 */
import type { Pool } from '@bioprocess/shared/server/postgres';
import { GroupCommit } from '@bioprocess/shared/group-commit';
import type { CachedApiKey, ChangeNotifiedCache } from '../platform/access-caches.ts';

/** How stale an API key's last_used_at may be. */
const API_KEY_USE_RESOLUTION = "interval '1 minute'";
/** Keys per statement at most. */
const MAX_KEYS = 1_000;

export interface ApiKeyLookups {
  /** The live (unrevoked, unexpired) key with this hash, or null. */
  find(keyHash: string): Promise<CachedApiKey | null>;
}

export function createApiKeyLookups(pool: Pool, cache: ChangeNotifiedCache<string, CachedApiKey>): ApiKeyLookups {
  const lookups = new GroupCommit<string, CachedApiKey | null>({
    flush: async (hashes) => {
      // A feed's key is used many times a second: last_used_at is written at most once a minute, so
      // concurrent requests do not queue on the key's row lock (or leave a dead row each).
      // Named: prepared once per connection (feeds run it many times a second).
      const { rows } = await pool.query<CachedApiKey & { key_hash: string }>({
        name: 'api-key-lookup',
        text: `WITH key AS (
           SELECT id, name, organization_id, role, expires_at, last_used_at, key_hash FROM api_keys
            WHERE key_hash = ANY($1::text[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
         ), touched AS (
           UPDATE api_keys SET last_used_at = now()
            WHERE id IN (SELECT id FROM key WHERE last_used_at IS NULL OR last_used_at < now() - ${API_KEY_USE_RESOLUTION})
         )
         SELECT id, name, organization_id, role, expires_at, key_hash FROM key`,
        values: [[...new Set(hashes)]],
      });
      const byHash = new Map(rows.map(({ key_hash: keyHash, ...key }) => [keyHash, key]));
      return hashes.map((hash) => byHash.get(hash) ?? null);
    },
    weigh: () => 1,
    maxWeight: MAX_KEYS,
  });
  return {
    find: async (keyHash) => {
      // A feed's key comes from memory (access-caches.ts), looked up again every 30 seconds at least.
      const cached = cache.get(keyHash);
      if (cached && (cached.expires_at === null || cached.expires_at.getTime() > Date.now())) return cached;
      const stamp = cache.stamp();
      const found = await lookups.submit(keyHash);
      if (found) cache.set(keyHash, found, stamp);
      return found;
    },
  };
}
