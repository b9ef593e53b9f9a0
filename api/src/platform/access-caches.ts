/**
 * Who may write where, kept in memory: an API key's row by its hash, an instrument's organisation by
 * its id. Instrument feeds post many times a second with the same key to the same instruments, and
 * looking both up for every post cost two PostgreSQL statements and two round trips of each post's wait.
 *
 * An entry is served only while this process hears of every change that could make it wrong: triggers
 * on `api_keys` and `instruments` (migration 3900) notify each revocation, expiry or role change of a
 * key, and each deletion or move of an instrument, and the entry goes. While the listening connection
 * is down nothing is served from memory; when it is back the caches start empty. A lookup that was
 * under way when a change was heard does not store its answer (it may predate the change). A change
 * made through this api also empties the caches before its answer goes (forgetAll), so the caller's next
 * request never races the notification.
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import { listenConnection } from './listen-connection.ts';

export const API_KEY_CHANGED_CHANNEL = 'api_key_changed';
export const INSTRUMENT_CHANGED_CHANNEL = 'instrument_changed';
/** The listening connection's application_name (pg_stat_activity). */
export const ACCESS_CHANGES_APPLICATION = 'bioprocess-access-changes';

/** A key is looked up again at least this often: its last use is recorded to the minute. */
const API_KEY_TTL_MS = 30_000;
const INSTRUMENT_TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 100_000;

/**
 * Entries that hold while no change was heard. A lookup takes a `stamp()` before its statement and
 * stores its answer with it: the answer is dropped when a change was heard meanwhile.
 */
export class ChangeNotifiedCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  private generation = 0;

  constructor(private readonly ttlMs: number, private readonly serving: () => boolean, private readonly maxEntries = MAX_ENTRIES) {}

  get(key: K): V | undefined {
    if (!this.serving()) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  stamp(): number {
    return this.generation;
  }

  set(key: K, value: V, stamp: number): void {
    if (stamp !== this.generation || !this.serving()) return;
    // Bounded: past the bound it starts again empty rather than keep order for an eviction.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until: Date.now() + this.ttlMs });
  }

  forget(key: K): void {
    this.generation += 1;
    this.entries.delete(key);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

/** What the caches hold of a live API key. */
export interface CachedApiKey {
  id: number;
  name: string;
  organization_id: number;
  role: string;
  expires_at: Date | null;
}

export interface AccessCaches {
  /** Live API keys by the hash of their token. */
  readonly apiKeys: ChangeNotifiedCache<string, CachedApiKey>;
  /** Instruments' organisations by instrument id. */
  readonly instrumentOwners: ChangeNotifiedCache<number, number>;
  /** Empties both: this process just changed keys or instruments. */
  forgetAll(): void;
  /** True while changes are heard (and entries served). */
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createAccessCaches(databaseUrl: string, logger: Logger): AccessCaches {
  const serving = () => connection.listening;
  const apiKeys = new ChangeNotifiedCache<string, CachedApiKey>(API_KEY_TTL_MS, serving);
  const instrumentOwners = new ChangeNotifiedCache<number, number>(INSTRUMENT_TTL_MS, serving);
  const forgetAll = () => {
    apiKeys.clear();
    instrumentOwners.clear();
  };
  const connection = listenConnection(databaseUrl, [API_KEY_CHANGED_CHANNEL, INSTRUMENT_CHANGED_CHANNEL], {
    notification: (channel, payload) => {
      if (channel === API_KEY_CHANGED_CHANNEL && payload) apiKeys.forget(payload);
      else if (channel === INSTRUMENT_CHANGED_CHANNEL && payload) instrumentOwners.forget(Number(payload));
      else forgetAll();
    },
    // Anything may have changed while nobody listened.
    listening: forgetAll,
    lost: forgetAll,
  }, logger, 'key and instrument change notifications', ACCESS_CHANGES_APPLICATION);
  connection.start();

  return {
    apiKeys,
    instrumentOwners,
    forgetAll,
    get listening() {
      return connection.listening;
    },
    close: () => connection.close(),
  };
}
