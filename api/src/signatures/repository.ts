/**
 * Signature rows (of runs, and of alert firings whose acknowledgement was signed): recording one bound
 * to a content hash, listing a record's signatures with their validity computed on read (revoked; else the record's hash now against the one signed), revoking,
 * and the meanings an organisation may sign with.
 */
import type { Queryable } from '@bioprocess/shared/server/postgres';
import type pg from 'pg';
import {
  BUILT_IN_SIGNATURE_MEANINGS, formatInstantInZone, type Signature, type SignatureMeaning, type SignatureRecordType,
} from '@bioprocess/shared/run-review';
import { toIsoTimestamp } from '@bioprocess/shared/entities';

export interface SignatureRow {
  id: number;
  record_type: SignatureRecordType;
  record_id: number;
  meaning: string;
  meaning_label: string;
  signer_id: number | null;
  signer_name: string;
  signer_email: string;
  signed_at: Date | string;
  time_zone: string;
  content_sha256: string;
  authentication: 'password' | 'recent_sign_in';
  revoked_at: Date | string | null;
  revoke_reason: string | null;
}

const SIGNATURE_COLUMNS = `id, record_type, record_id, meaning, meaning_label, signer_id, signer_name, signer_email, signed_at, time_zone,
  content_sha256, authentication, revoked_at, revoke_reason`;

export function toSignature(row: SignatureRow, currentHash: string): Signature {
  const signedAt = toIsoTimestamp(row.signed_at);
  return {
    id: row.id, record_type: row.record_type, record_id: row.record_id, meaning: row.meaning, meaning_label: row.meaning_label,
    signer_id: row.signer_id, signer_name: row.signer_name, signer_email: row.signer_email,
    signed_at: signedAt, time_zone: row.time_zone, signed_at_local: formatInstantInZone(signedAt, row.time_zone),
    content_sha256: row.content_sha256, authentication: row.authentication,
    validity: row.revoked_at ? 'revoked' : row.content_sha256 === currentHash ? 'valid' : 'invalid',
    revoked_at: toIsoTimestamp(row.revoked_at), revoke_reason: row.revoke_reason,
  };
}

export async function listRecordSignatures(db: Queryable, organizationId: number, recordId: number, currentHash: string): Promise<Signature[]> {
  const { rows } = await db.query<SignatureRow>(
    `SELECT ${SIGNATURE_COLUMNS} FROM signatures WHERE organization_id = $1 AND record_type = 'run' AND record_id = $2 ORDER BY id`,
    [organizationId, recordId],
  );
  return rows.map((row) => toSignature(row, currentHash));
}

export interface NewSignature {
  /** Runs when left out. */
  recordType?: SignatureRecordType;
  recordId: number;
  meaning: SignatureMeaning;
  signer: { id: number; name: string; email: string };
  timeZone: string;
  contentSha256: string;
  authentication: 'password' | 'recent_sign_in';
}

export async function insertSignature(client: pg.PoolClient, organizationId: number, signature: NewSignature): Promise<Signature> {
  const { rows } = await client.query<SignatureRow>(
    `INSERT INTO signatures (organization_id, record_type, record_id, meaning, meaning_label, signer_id, signer_name, signer_email,
                             time_zone, content_sha256, authentication)
     VALUES ($1, $11, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${SIGNATURE_COLUMNS}`,
    [organizationId, signature.recordId, signature.meaning.code, signature.meaning.label, signature.signer.id, signature.signer.name,
      signature.signer.email, signature.timeZone, signature.contentSha256, signature.authentication, signature.recordType ?? 'run'],
  );
  return toSignature(rows[0]!, signature.contentSha256);
}

/** Marks the record's standing signatures revoked (never deletes them); answers their ids. */
export async function revokeRecordSignatures(
  client: pg.PoolClient, organizationId: number, recordId: number, revokedBy: number | null, reason: string,
): Promise<number[]> {
  const { rows } = await client.query<{ id: number }>(
    `UPDATE signatures SET revoked_at = clock_timestamp(), revoked_by = $3, revoke_reason = $4
      WHERE organization_id = $1 AND record_type = 'run' AND record_id = $2 AND revoked_at IS NULL RETURNING id`,
    [organizationId, recordId, revokedBy, reason],
  );
  return rows.map((row) => row.id);
}

/** The built-in meanings, then the organisation's own. */
export async function listSignatureMeanings(db: Queryable, organizationId: number): Promise<SignatureMeaning[]> {
  const { rows } = await db.query<{ code: string; label: string }>(
    'SELECT code, label FROM signature_meanings WHERE organization_id = $1 ORDER BY code', [organizationId]);
  return [
    ...BUILT_IN_SIGNATURE_MEANINGS.map((meaning) => ({ ...meaning, built_in: true })),
    ...rows.map((row) => ({ code: row.code, label: row.label, built_in: false })),
  ];
}

export async function replaceOrganizationMeanings(
  client: pg.PoolClient, organizationId: number, meanings: ReadonlyArray<{ code: string; label: string }>,
): Promise<void> {
  await client.query('DELETE FROM signature_meanings WHERE organization_id = $1', [organizationId]);
  for (const meaning of meanings) {
    await client.query('INSERT INTO signature_meanings (organization_id, code, label) VALUES ($1, $2, $3)', [organizationId, meaning.code, meaning.label]);
  }
}
