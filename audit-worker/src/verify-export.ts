/**
 * The offline verifier: checks an audit CSV export (GET /api/v1/audit/logs/export) against a signed
 * checkpoint, with nothing but the two files. It streams the file, recomputes every entry's hash as it
 * reads, keeps each entry's position and link compactly, then follows each organisation's chain in
 * chain order, and checks the checkpoint's signature and that the chain reaches the checkpointed entry
 * with the signed hash.
 */
import type { Readable } from 'node:stream';
import { AUDIT_EXPORT_COLUMNS } from '@bioprocess/shared/auth-contracts';
import { csvRecords } from './csv-records.ts';
import {
  ChainChecker, checkpointSignatureValid, linkedEntry, type ChainBreak, type ChainedEntry, type LinkedEntry, type SignedCheckpoint,
} from '@bioprocess/shared/audit-chain';

export interface ExportVerification {
  valid: boolean;
  /** Entries read from the file. */
  entries: number;
  /** Entries in the file without a link (written before the chain and not linked yet, or added by hand). */
  unlinked: number;
  organizations: Array<{ organization_id: number; entries: number; last_seq: number; last_hash: string; broken: ChainBreak | null }>;
  checkpoint: { organization_id: number; chain_seq: number; signature_valid: boolean; key_fingerprint: string; reached: boolean } | null;
  /** The first problem found, in words. */
  problem: string | null;
}

/** Undoes the export's CSV-injection guard (a leading quote before = + - @ tab or carriage return). */
const unguard = (value: string): string => (/^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value);
const textOf = (value: string | undefined): string | null => (value === undefined || value === '' ? null : unguard(value));
const intOf = (value: string | undefined): number | null => (value === undefined || value === '' ? null : Number(value));

function entryOf(record: Record<string, string>): (ChainedEntry & { linked: true }) | { linked: false } {
  const chainSeq = intOf(record.chain_seq);
  if (chainSeq === null) return { linked: false };
  return {
    linked: true,
    event_id: record.event_id ?? '',
    created_at: record.created_at ?? '',
    event_type: textOf(record.event_type) ?? '',
    action: textOf(record.action) ?? '',
    resource_type: textOf(record.resource_type),
    resource_id: textOf(record.resource_id),
    success: record.success === 'true',
    user_id: intOf(record.user_id),
    user_email: textOf(record.user_email),
    organization_id: intOf(record.organization_id),
    ip: textOf(record.ip),
    changes: record.changes ? JSON.parse(unguard(record.changes)) : null,
    change_reason: textOf(record.change_reason),
    change_reason_code: textOf(record.change_reason_code),
    change_seq: intOf(record.change_seq),
    chain_seq: chainSeq,
    prev_hash: record.prev_hash ?? '',
    entry_hash: record.entry_hash ?? '',
  };
}

export interface VerifyExportOptions {
  /** The export is a date range: its first entry per organisation may be mid-chain. */
  partial?: boolean;
  /** Fingerprint (SHA-256 of the SPKI DER, hex) the checkpoint's key must have, as the operator published it. */
  expectedKeyFingerprint?: string;
}

/**
 * One chain's entries as read, kept compactly (about 90 bytes an entry: a million entries take some
 * 90 MB) since the export lists entries in the order of their changes, which is not always the order
 * they were linked in (concurrent workers, events re-sent after a Redis loss).
 */
class ChainIndex {
  private size = 0;
  private seqs = new Float64Array(1024);
  private hashes = Buffer.alloc(1024 * 64);
  private intact = new Uint8Array(1024);
  private rows = new Uint32Array(1024);

  add(entry: LinkedEntry, row: number): void {
    if (this.size === this.seqs.length) this.grow();
    const index = this.size++;
    this.seqs[index] = entry.chain_seq;
    // A hash that is not 64 hex digits is kept as written (zeroes): its entry fails its own check anyway.
    this.hashes.write(/^[0-9a-f]{64}$/.test(entry.prev_hash) ? entry.prev_hash : '', index * 64, 32, 'hex');
    this.hashes.write(/^[0-9a-f]{64}$/.test(entry.entry_hash) ? entry.entry_hash : '', index * 64 + 32, 32, 'hex');
    this.intact[index] = entry.intact ? 1 : 0;
    this.rows[index] = row;
  }

  private grow(): void {
    const capacity = this.seqs.length * 2;
    const seqs = new Float64Array(capacity);
    seqs.set(this.seqs);
    const hashes = Buffer.alloc(capacity * 64);
    this.hashes.copy(hashes);
    const intact = new Uint8Array(capacity);
    intact.set(this.intact);
    const rows = new Uint32Array(capacity);
    rows.set(this.rows);
    Object.assign(this, { seqs, hashes, intact, rows });
  }

  /** The entries in chain order (stable: a repeated position keeps the file's order). */
  *inChainOrder(): Generator<LinkedEntry & { row: number }> {
    const order = new Uint32Array(this.size);
    for (let index = 0; index < this.size; index += 1) order[index] = index;
    const seqs = this.seqs;
    order.sort((a, b) => seqs[a]! - seqs[b]! || a - b);
    for (const index of order) {
      yield {
        chain_seq: seqs[index]!,
        prev_hash: this.hashes.toString('hex', index * 64, index * 64 + 32),
        entry_hash: this.hashes.toString('hex', index * 64 + 32, index * 64 + 64),
        event_id: null,
        intact: this.intact[index] === 1,
        row: this.rows[index]!,
      };
    }
  }
}

export async function verifyExport(csv: Readable, checkpoint: SignedCheckpoint | null, options: VerifyExportOptions = {}): Promise<ExportVerification> {
  const chains = new Map<number, ChainIndex>();
  let entries = 0;
  let unlinked = 0;
  let header: string[] | null = null;
  for await (const cells of csvRecords(csv)) {
    if (!header) {
      header = cells;
      const missing = AUDIT_EXPORT_COLUMNS.filter((column) => !cells.includes(column));
      if (missing.length > 0) throw new Error(`the file is not an audit export with chain columns: it lacks ${missing.join(', ')}`);
      continue;
    }
    if (cells.length !== header.length) throw new Error(`record ${entries + 1} has ${cells.length} cells, the header ${header.length}`);
    const record: Record<string, string> = {};
    for (let index = 0; index < header.length; index += 1) record[header[index]!] = cells[index]!;
    entries += 1;
    const entry = entryOf(record);
    if (!entry.linked) {
      unlinked += 1;
      continue;
    }
    const chainKey = entry.organization_id ?? 0;
    let chain = chains.get(chainKey);
    if (!chain) chains.set(chainKey, (chain = new ChainIndex()));
    // Row numbers count records after the header, from 1.
    chain.add(linkedEntry(entry), entries);
  }

  let signatureValid = false;
  if (checkpoint) {
    signatureValid = checkpointSignatureValid(checkpoint)
      && (!options.expectedKeyFingerprint || options.expectedKeyFingerprint.toLowerCase() === checkpoint.key_fingerprint);
  }
  let checkpointHash: string | null = null;
  const organizations = [...chains].map(([organizationId, chain]) => {
    const checker = new ChainChecker({ partial: options.partial });
    const signed = checkpoint && organizationId === checkpoint.organization_id ? checkpoint : null;
    for (const entry of chain.inChainOrder()) {
      checker.add({ ...entry, event_id: `row ${entry.row}` });
      if (signed && entry.chain_seq === signed.chain_seq) checkpointHash = entry.entry_hash;
    }
    const result = checker.finish(signed ? { chain_seq: signed.chain_seq, entry_hash: signed.entry_hash, hashAt: checkpointHash } : undefined);
    return { organization_id: organizationId, entries: result.entries, last_seq: result.last_seq, last_hash: result.last_hash, broken: result.broken };
  });
  if (checkpoint && !chains.has(checkpoint.organization_id)) {
    organizations.push({
      organization_id: checkpoint.organization_id, entries: 0, last_seq: 0, last_hash: '',
      broken: { kind: 'removed', chain_seq: 1, event_id: null, detail: `the file has no entry of organisation ${checkpoint.organization_id}, which the checkpoint signed` },
    });
  }

  const firstBroken = organizations.find((organization) => organization.broken);
  let problem: string | null = null;
  if (checkpoint && !signatureValid) problem = 'the checkpoint signature is not valid (or its key is not the expected one)';
  else if (firstBroken) problem = `organisation ${firstBroken.organization_id}: ${firstBroken.broken!.kind} at entry ${firstBroken.broken!.chain_seq}: ${firstBroken.broken!.detail}`;
  else if (unlinked > 0) problem = `${unlinked} entries carry no link (written before the chain and not linked yet, or added by hand)`;
  return {
    valid: problem === null,
    entries,
    unlinked,
    organizations,
    checkpoint: checkpoint
      ? { organization_id: checkpoint.organization_id, chain_seq: checkpoint.chain_seq, signature_valid: signatureValid, key_fingerprint: checkpoint.key_fingerprint, reached: checkpointHash === checkpoint.entry_hash }
      : null,
    problem,
  };
}
