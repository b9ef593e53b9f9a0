/**
 * Linking audit entries into their organisation's hash chain, inside the transaction that stores them.
 * The chain head's row lock serialises every writer of one chain (any number of audit-workers), and the
 * head moves in the same transaction as the insert: a worker killed mid-way leaves neither, so the
 * chain never forks or skips. Rows written before the chain existed are linked first, in their order.
 */
import type { KeyObject } from 'node:crypto';
import {
  GENESIS_HASH, chainKeyOf, entryHash, signCheckpoint, type ChainedEntryContent,
} from '@bioprocess/shared/audit-chain';
import type { Pool, PoolClient } from '@bioprocess/shared/server/postgres';

/** Legacy rows linked per statement batch while a head is held. */
const LEGACY_BATCH = 1_000;

export interface ChainHead {
  chainKey: number;
  lastSeq: number;
  lastHash: string;
  checkpointedSeq: number;
}

/** Creates the chain's head if needed and locks it for the rest of the transaction. */
export async function lockChainHead(client: PoolClient, chainKey: number): Promise<ChainHead> {
  await client.query(
    'INSERT INTO audit_chain_heads (chain_key, last_seq, last_hash) VALUES ($1, 0, $2) ON CONFLICT (chain_key) DO NOTHING',
    [chainKey, GENESIS_HASH],
  );
  const { rows } = await client.query<{ last_seq: number; last_hash: string; checkpointed_seq: number }>(
    'SELECT last_seq, last_hash, checkpointed_seq FROM audit_chain_heads WHERE chain_key = $1 FOR UPDATE',
    [chainKey],
  );
  const head = rows[0]!;
  const linked = await linkLegacyEntries(client, chainKey, { chainKey, lastSeq: head.last_seq, lastHash: head.last_hash, checkpointedSeq: head.checkpointed_seq });
  return linked;
}

/** The hashed content of a row read with CONTENT_COLUMNS. */
export const CONTENT_COLUMNS = `event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  event_type, action, resource_type, resource_id, success, user_id, user_email, organization_id, ip, changes,
  change_reason, change_reason_code, change_seq`;

/** Links the chain's rows that predate the chain (up to the migration's mark), oldest first. */
async function linkLegacyEntries(client: PoolClient, chainKey: number, head: ChainHead): Promise<ChainHead> {
  const current = { ...head };
  for (;;) {
    const { rows } = await client.query<ChainedEntryContent & { id: number }>(
      `SELECT id, ${CONTENT_COLUMNS} FROM audit_logs
        WHERE coalesce(organization_id, 0) = $1 AND chain_seq IS NULL AND id <= (SELECT max_id FROM audit_chain_legacy)
        ORDER BY created_at, change_seq NULLS FIRST, id LIMIT $2`,
      [chainKey, LEGACY_BATCH],
    );
    if (rows.length === 0) break;
    const ids: number[] = [];
    const seqs: number[] = [];
    const prevs: string[] = [];
    const hashes: string[] = [];
    for (const row of rows) {
      const hash = entryHash(row, current.lastHash);
      ids.push(row.id);
      seqs.push(current.lastSeq + 1);
      prevs.push(current.lastHash);
      hashes.push(hash);
      current.lastSeq += 1;
      current.lastHash = hash;
    }
    await client.query(
      `UPDATE audit_logs SET chain_seq = linked.seq, prev_hash = linked.prev, entry_hash = linked.hash
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS linked(id, seq, prev, hash)
        WHERE audit_logs.id = linked.id`,
      [ids, seqs, prevs, hashes],
    );
    if (rows.length < LEGACY_BATCH) break;
  }
  if (current.lastSeq !== head.lastSeq) await saveHead(client, current);
  return current;
}

async function saveHead(client: PoolClient, head: ChainHead): Promise<void> {
  await client.query('UPDATE audit_chain_heads SET last_seq = $2, last_hash = $3, checkpointed_seq = $4 WHERE chain_key = $1', [
    head.chainKey, head.lastSeq, head.lastHash, head.checkpointedSeq,
  ]);
}

/** The link of a new entry after the head; the head is advanced (saved by advanceHead). */
export function nextLink(head: ChainHead, content: ChainedEntryContent): { chainSeq: number; prevHash: string; entryHash: string } {
  return { chainSeq: head.lastSeq + 1, prevHash: head.lastHash, entryHash: entryHash(content, head.lastHash) };
}

export interface CheckpointPolicy {
  key: KeyObject | null;
  /** Checkpoint once this many entries were added since the last one. */
  every: number;
}

/** Saves the head after an entry was linked, writing a checkpoint when the policy says it is time. */
export async function advanceHead(
  client: PoolClient, head: ChainHead, link: { chainSeq: number; entryHash: string }, policy: CheckpointPolicy,
): Promise<void> {
  const next: ChainHead = { ...head, lastSeq: link.chainSeq, lastHash: link.entryHash };
  if (policy.key && next.lastSeq - next.checkpointedSeq >= policy.every) await writeCheckpoint(client, next, policy.key);
  await saveHead(client, next);
}

/** Signs the head's state and stores the checkpoint (the head is marked checkpointed by the caller's save). */
async function writeCheckpoint(client: PoolClient, head: ChainHead, key: KeyObject): Promise<void> {
  const { rows } = await client.query<{ now: string }>(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`);
  const signed = signCheckpoint({ organization_id: head.chainKey, chain_seq: head.lastSeq, entry_hash: head.lastHash, created_at: rows[0]!.now }, key);
  await client.query(
    `INSERT INTO audit_checkpoints (chain_key, chain_seq, entry_hash, created_at, algorithm, public_key, key_fingerprint, signature)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [head.chainKey, signed.chain_seq, signed.entry_hash, signed.created_at, signed.algorithm, signed.public_key, signed.key_fingerprint, signed.signature],
  );
  head.checkpointedSeq = head.lastSeq;
}

/**
 * Checkpoints every chain that grew since its last checkpoint (the periodic pass), and links the rows
 * of chains that predate the chain and have had no new entry yet. Each chain in its own transaction.
 */
export async function checkpointChains(pool: Pool, key: KeyObject | null): Promise<number> {
  const { rows: legacy } = await pool.query<{ chain_key: number }>(
    `SELECT DISTINCT coalesce(organization_id, 0) AS chain_key FROM audit_logs
      WHERE chain_seq IS NULL AND id <= (SELECT max_id FROM audit_chain_legacy)`,
  );
  const { rows: grown } = await pool.query<{ chain_key: number }>('SELECT chain_key FROM audit_chain_heads WHERE last_seq > checkpointed_seq');
  const keys = new Set([...legacy, ...grown].map((row) => Number(row.chain_key)));
  let written = 0;
  for (const chainKey of keys) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const head = await lockChainHead(client, chainKey);
      if (key && head.lastSeq > head.checkpointedSeq) {
        await writeCheckpoint(client, head, key);
        await saveHead(client, head);
        written += 1;
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  return written;
}

export { chainKeyOf };
