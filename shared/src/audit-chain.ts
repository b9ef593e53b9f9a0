/**
 * The audit trail's hash chain and checkpoints: the one definition of what is hashed and signed, used
 * by the audit-worker (which links entries), the api (which verifies the stored chain) and the offline
 * verifier (which checks a CSV export). docs/compliance.md states the same rules for an auditor who
 * re-implements them; a change here is a change of the format version.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export const AUDIT_CHAIN_VERSION = 'bioprocess-audit-v1';
export const AUDIT_CHECKPOINT_VERSION = 'bioprocess-audit-checkpoint-v1';
/** The previous hash of a chain's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields of an entry that its hash covers, as stored. */
export interface ChainedEntryContent {
  event_id: string;
  /** ISO 8601 UTC with milliseconds, e.g. 2026-03-01T09:30:00.125Z. */
  created_at: string;
  event_type: string;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  success: boolean;
  user_id: number | null;
  user_email: string | null;
  organization_id: number | null;
  ip: string | null;
  changes: unknown;
  change_reason: string | null;
  change_reason_code: string | null;
  change_seq: number | null;
}

export interface ChainedEntry extends ChainedEntryContent {
  chain_seq: number;
  prev_hash: string;
  entry_hash: string;
}

/**
 * JSON with object keys sorted by UTF-16 code units at every level and no insignificant whitespace;
 * strings and numbers as JSON.stringify writes them. (JSON.stringify alone is not canonical: it keeps
 * insertion order and puts integer-like keys first.)
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value);
}

/** Empty text and no text are one value (a CSV cell cannot tell them apart). */
const text = (value: string | null | undefined): string | null => (value === undefined || value === null || value === '' ? null : value);

/** The exact bytes an entry's hash is taken over (UTF-8 of this string). */
export function entrySerialisation(content: ChainedEntryContent, prevHash: string): string {
  return canonicalJson([
    AUDIT_CHAIN_VERSION,
    prevHash,
    content.event_id,
    content.created_at,
    content.event_type,
    content.action,
    text(content.resource_type),
    text(content.resource_id),
    content.success,
    content.user_id,
    text(content.user_email),
    content.organization_id,
    text(content.ip),
    content.changes ?? null,
    text(content.change_reason),
    text(content.change_reason_code),
    content.change_seq,
  ]);
}

export function entryHash(content: ChainedEntryContent, prevHash: string): string {
  return createHash('sha256').update(entrySerialisation(content, prevHash), 'utf8').digest('hex');
}

/** The chain an entry belongs to: its organisation, 0 for events of none. */
export const chainKeyOf = (organizationId: number | null): number => organizationId ?? 0;

// ---- checkpoints ------------------------------------------------------------------------------

export interface CheckpointDigest {
  organization_id: number;
  chain_seq: number;
  entry_hash: string;
  created_at: string;
}

export interface SignedCheckpoint extends CheckpointDigest {
  version: typeof AUDIT_CHECKPOINT_VERSION;
  algorithm: 'Ed25519';
  /** SPKI PEM of the signing key, so a verifier needs no secret. */
  public_key: string;
  /** SHA-256 of the key's DER (SPKI) in hex: compare it with the fingerprint the operator published. */
  key_fingerprint: string;
  /** Base64 Ed25519 signature of checkpointSerialisation(). */
  signature: string;
}

export function checkpointSerialisation(digest: CheckpointDigest): string {
  return canonicalJson([AUDIT_CHECKPOINT_VERSION, digest.organization_id, digest.chain_seq, digest.entry_hash, digest.created_at]);
}

export function keyFingerprint(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** The signing key from its PEM (PKCS#8; `\n` written as two characters is accepted, as env files do). */
export function loadCheckpointKey(pem: string): KeyObject {
  const key = createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the audit checkpoint key must be an Ed25519 private key');
  return key;
}

export function signCheckpoint(digest: CheckpointDigest, privateKey: KeyObject): SignedCheckpoint {
  const publicKey = createPublicKey(privateKey);
  return {
    version: AUDIT_CHECKPOINT_VERSION,
    ...digest,
    algorithm: 'Ed25519',
    public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    key_fingerprint: keyFingerprint(publicKey),
    signature: sign(null, Buffer.from(checkpointSerialisation(digest), 'utf8'), privateKey).toString('base64'),
  };
}

/** Whether the signature holds for the checkpoint's digest under its own public key. */
export function checkpointSignatureValid(checkpoint: SignedCheckpoint): boolean {
  try {
    const publicKey = createPublicKey(checkpoint.public_key);
    if (keyFingerprint(publicKey) !== checkpoint.key_fingerprint) return false;
    return verify(null, Buffer.from(checkpointSerialisation(checkpoint), 'utf8'), publicKey, Buffer.from(checkpoint.signature, 'base64'));
  } catch {
    return false;
  }
}

// ---- verification -----------------------------------------------------------------------------

export type ChainBreakKind = 'edited' | 'removed' | 'reordered' | 'inserted';

export interface ChainBreak {
  kind: ChainBreakKind;
  /** The chain position where the trail stops being what was written. */
  chain_seq: number;
  event_id: string | null;
  detail: string;
}

export interface ChainCheckResult {
  entries: number;
  last_seq: number;
  last_hash: string;
  broken: ChainBreak | null;
}

/** What the link check needs of an entry: its position, its link, and whether its own hash holds. */
export interface LinkedEntry {
  chain_seq: number;
  prev_hash: string;
  entry_hash: string;
  event_id: string | null;
  /** Its hash recomputed from its content and prev_hash equals entry_hash. */
  intact: boolean;
}

export function linkedEntry(entry: ChainedEntry): LinkedEntry {
  return {
    chain_seq: entry.chain_seq, prev_hash: entry.prev_hash, entry_hash: entry.entry_hash, event_id: entry.event_id,
    intact: entryHash(entry, entry.prev_hash) === entry.entry_hash,
  };
}

/**
 * Checks one chain's entries fed in the order of their sequence numbers, in bounded memory: each entry's
 * own hash (edited), its sequence (a gap: removed; a repeat: inserted), and its link to the entry before
 * it. A link that points elsewhere is a moved entry when the hash it names turns up later in the stream
 * (reordered), else the entry before it was rewritten with a recomputed hash (edited). The first break
 * is reported. `partial` lets a date-filtered export start mid-chain: its first link is taken as given.
 */
export class ChainChecker {
  private entries = 0;
  private lastSeq = 0;
  private lastHash = GENESIS_HASH;
  private broken: ChainBreak | null = null;
  /** A link that named a hash not seen yet: resolved as reordered if that hash turns up. */
  private pendingLink: { hash: string; missingSeq: number | null; at: { chain_seq: number; event_id: string | null } } | null = null;

  constructor(private readonly options: { partial?: boolean } = {}) {}

  add(entry: LinkedEntry): void {
    this.entries += 1;
    if (this.pendingLink && this.broken && (entry.entry_hash === this.pendingLink.hash || entry.chain_seq === this.pendingLink.missingSeq)) {
      const { at } = this.pendingLink;
      this.broken = { kind: 'reordered', ...at, detail: `entry ${at.chain_seq} stands before entry ${entry.chain_seq}, which was written before it` };
      this.pendingLink = null;
    }
    const first = this.entries === 1;
    if (!this.broken) {
      if (!entry.intact) {
        this.broken = { kind: 'edited', chain_seq: entry.chain_seq, event_id: entry.event_id, detail: `entry ${entry.chain_seq} does not match its hash: its content was changed` };
      } else if (first && this.options.partial) {
        // A date-filtered export starts mid-chain: its first link cannot be checked here.
      } else if (entry.chain_seq === this.lastSeq) {
        this.broken = { kind: 'inserted', chain_seq: entry.chain_seq, event_id: entry.event_id, detail: `entry ${entry.chain_seq} appears twice` };
      } else if (entry.chain_seq < this.lastSeq) {
        this.broken = { kind: 'reordered', chain_seq: entry.chain_seq, event_id: entry.event_id, detail: `entry ${entry.chain_seq} comes after entry ${this.lastSeq}` };
      } else if (entry.chain_seq > this.lastSeq + 1) {
        this.broken = { kind: 'removed', chain_seq: this.lastSeq + 1, event_id: null, detail: `entries ${this.lastSeq + 1} to ${entry.chain_seq - 1} are missing` };
        this.pendingLink = { hash: entry.prev_hash, missingSeq: this.lastSeq + 1, at: { chain_seq: entry.chain_seq, event_id: entry.event_id } };
      } else if (entry.prev_hash !== this.lastHash) {
        // Removal of the entry before, with the later entries renumbered, also lands here: it is
        // reported as an edit of that entry's position, which is what the stored rows show.
        this.broken = { kind: 'edited', chain_seq: this.lastSeq, event_id: null, detail: `entry ${entry.chain_seq} does not follow entry ${this.lastSeq}: the entry before it was changed or replaced` };
        this.pendingLink = { hash: entry.prev_hash, missingSeq: null, at: { chain_seq: entry.chain_seq, event_id: entry.event_id } };
        if (this.lastSeq === 0) this.broken = { kind: 'removed', chain_seq: 1, event_id: null, detail: 'the chain does not start at its first entry' };
      }
    }
    this.lastSeq = entry.chain_seq;
    this.lastHash = entry.entry_hash;
  }

  /** The end of the entries: a checkpoint names where the chain must reach and with which hash. */
  finish(checkpoint?: { chain_seq: number; entry_hash: string; hashAt?: string | null }): ChainCheckResult {
    if (!this.broken && checkpoint) {
      if (this.lastSeq < checkpoint.chain_seq) {
        this.broken = { kind: 'removed', chain_seq: this.lastSeq + 1, event_id: null, detail: `the chain ends at entry ${this.lastSeq}, the checkpoint signed entry ${checkpoint.chain_seq}` };
      } else {
        const hashAt = checkpoint.hashAt ?? (this.lastSeq === checkpoint.chain_seq ? this.lastHash : null);
        if (hashAt !== checkpoint.entry_hash) {
          this.broken = { kind: 'edited', chain_seq: checkpoint.chain_seq, event_id: null, detail: `entry ${checkpoint.chain_seq} does not carry the hash the checkpoint signed: the chain up to it was rewritten` };
        }
      }
    }
    return { entries: this.entries, last_seq: this.lastSeq, last_hash: this.lastHash, broken: this.broken };
  }
}
