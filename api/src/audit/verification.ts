/**
 * Verifies one organisation's audit chain as stored: every entry in chain order through a server-side
 * cursor (memory does not grow with the chain), then the chain's head, every signed checkpoint, and rows
 * written after the chain began that carry no link. The rules are those of the offline verifier
 * (ChainChecker in shared/src/audit-chain.ts).
 */
import {
  ChainChecker, checkpointSignatureValid, linkedEntry, type ChainBreak, type ChainedEntry, type SignedCheckpoint,
} from '@bioprocess/shared/audit-chain';
import type { AuditCheckpoint, AuditVerification } from '@bioprocess/shared/audit-verification';
import type { Pool } from '@bioprocess/shared/server/postgres';

const FETCH_SIZE = 5_000;

const ENTRY_COLUMNS = `event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  event_type, action, resource_type, resource_id, success, user_id, user_email, organization_id, ip, changes,
  change_reason, change_reason_code, change_seq, chain_seq, prev_hash, entry_hash`;

const CHECKPOINT_COLUMNS = `id, chain_key AS organization_id, chain_seq, entry_hash, created_at, algorithm, public_key, key_fingerprint, signature`;

function asCheckpoint(row: Record<string, unknown>): AuditCheckpoint {
  return { version: 'bioprocess-audit-checkpoint-v1', ...(row as Omit<AuditCheckpoint, 'version'>) };
}

export async function listCheckpoints(pool: Pool, chainKey: number, limit = 100): Promise<AuditCheckpoint[]> {
  const { rows } = await pool.query(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE chain_key = $1 ORDER BY chain_seq DESC, id DESC LIMIT $2`, [chainKey, limit]);
  return rows.map(asCheckpoint);
}

export async function findCheckpoint(pool: Pool, id: number): Promise<AuditCheckpoint | null> {
  const { rows } = await pool.query(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE id = $1`, [id]);
  return rows[0] ? asCheckpoint(rows[0]) : null;
}

/** The checkpoint as a verifier downloads it (without the database id). */
export function checkpointFile(checkpoint: AuditCheckpoint): SignedCheckpoint {
  const { id: _id, ...signed } = checkpoint;
  return signed;
}

export async function verifyAuditChain(pool: Pool, chainKey: number): Promise<AuditVerification> {
  const { rows: checkpointRows } = await pool.query(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE chain_key = $1 ORDER BY chain_seq, id`, [chainKey]);
  const checkpoints = checkpointRows.map(asCheckpoint);
  // Hashes at the checkpointed positions, filled while the chain streams by.
  const hashAt = new Map<number, string>(checkpoints.map((checkpoint) => [checkpoint.chain_seq, '']));
  const checker = new ChainChecker();

  const client = await pool.connect();
  let finished = false;
  let head: { last_seq: number; last_hash: string } | undefined;
  let stray: { chain_seq: number | null; event_id: string } | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(
      `DECLARE audit_chain NO SCROLL CURSOR FOR SELECT ${ENTRY_COLUMNS} FROM audit_logs
        WHERE coalesce(organization_id, 0) = $1 AND chain_seq IS NOT NULL ORDER BY chain_seq`,
      [chainKey],
    );
    for (;;) {
      const { rows } = await client.query<ChainedEntry>(`FETCH ${FETCH_SIZE} FROM audit_chain`);
      if (rows.length === 0) break;
      for (const row of rows) {
        checker.add(linkedEntry(row));
        if (hashAt.has(row.chain_seq)) hashAt.set(row.chain_seq, row.entry_hash);
      }
    }
    head = (await client.query('SELECT last_seq, last_hash FROM audit_chain_heads WHERE chain_key = $1', [chainKey])).rows[0];
    // A row without a link written after the chain began was not written by the audit-worker.
    stray = (await client.query(
      `SELECT chain_seq, event_id FROM audit_logs WHERE coalesce(organization_id, 0) = $1 AND chain_seq IS NULL
          AND id > (SELECT max_id FROM audit_chain_legacy) ORDER BY id LIMIT 1`,
      [chainKey],
    )).rows[0];
    await client.query('COMMIT');
    finished = true;
  } finally {
    if (!finished) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }

  const latest = checkpoints.at(-1) ?? null;
  const result = checker.finish(latest ? { chain_seq: latest.chain_seq, entry_hash: latest.entry_hash, hashAt: hashAt.get(latest.chain_seq) || null } : undefined);
  let broken: ChainBreak | null = result.broken;
  for (const checkpoint of checkpoints) {
    if (broken) break;
    if (!checkpointSignatureValid(checkpoint)) {
      broken = { kind: 'edited', chain_seq: checkpoint.chain_seq, event_id: null, detail: `checkpoint ${checkpoint.id} does not carry a valid signature` };
    } else if (hashAt.get(checkpoint.chain_seq) !== checkpoint.entry_hash) {
      broken = hashAt.get(checkpoint.chain_seq)
        ? { kind: 'edited', chain_seq: checkpoint.chain_seq, event_id: null, detail: `entry ${checkpoint.chain_seq} does not carry the hash checkpoint ${checkpoint.id} signed: the chain up to it was rewritten` }
        : { kind: 'removed', chain_seq: checkpoint.chain_seq, event_id: null, detail: `entry ${checkpoint.chain_seq}, signed by checkpoint ${checkpoint.id}, is missing` };
    }
  }
  if (!broken && head && result.last_seq < head.last_seq) {
    broken = { kind: 'removed', chain_seq: result.last_seq + 1, event_id: null, detail: `the chain ends at entry ${result.last_seq}, its head at entry ${head.last_seq}` };
  } else if (!broken && head && result.last_seq === head.last_seq && result.last_hash !== head.last_hash) {
    broken = { kind: 'edited', chain_seq: head.last_seq, event_id: null, detail: `entry ${head.last_seq} does not carry the hash its head recorded` };
  }
  if (!broken && stray) {
    broken = { kind: 'inserted', chain_seq: result.last_seq, event_id: stray.event_id, detail: 'an entry without a link was added to the trail outside the audit-worker' };
  }
  return {
    organization_id: chainKey,
    valid: broken === null,
    entries: result.entries,
    last_seq: result.last_seq,
    last_hash: result.last_hash,
    checkpoints_checked: checkpoints.length,
    latest_checkpoint: latest,
    broken,
  };
}
