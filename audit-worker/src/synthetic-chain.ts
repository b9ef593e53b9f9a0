/**
 * A synthetic audit export for measuring and testing the offline verifier: `count` entries of one
 * organisation, linked as the audit-worker links them, written with the product's CSV writer in the
 * export's columns, and a checkpoint signed over the last entry. Entries carry realistic changes
 * (a before/after of a record), so the hashing work is that of a real trail.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { AUDIT_EXPORT_COLUMNS } from '@bioprocess/shared/auth-contracts';
import { csvRow } from '@bioprocess/shared/csv/write';
import { GENESIS_HASH, entryHash, signCheckpoint, type ChainedEntryContent, type SignedCheckpoint } from '@bioprocess/shared/audit-chain';

export async function writeSyntheticExport(file: string, count: number, organizationId = 1): Promise<SignedCheckpoint> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(csvRow(AUDIT_EXPORT_COLUMNS));
  const t0 = Date.UTC(2026, 0, 1);
  let prev = GENESIS_HASH;
  let batch = '';
  for (let seq = 1; seq <= count; seq += 1) {
    const content: ChainedEntryContent = {
      event_id: randomUUID(),
      created_at: new Date(t0 + seq * 250).toISOString(),
      event_type: 'run.updated',
      action: 'update',
      resource_type: 'run',
      resource_id: String(seq % 500),
      success: true,
      user_id: 7,
      user_email: 'scientist@example.test',
      organization_id: organizationId,
      ip: '10.0.0.7',
      changes: { before: { name: `Run ${seq}`, status: 'Draft', notes: null }, after: { name: `Run ${seq}`, status: 'Running', notes: 'pH probe recalibrated' } },
      change_reason: seq % 10 === 0 ? 'Transcription error' : null,
      change_reason_code: seq % 10 === 0 ? 'Correction' : null,
      change_seq: seq,
    };
    const hash = entryHash(content, prev);
    const row: Record<string, unknown> = { ...content, id: seq, chain_seq: seq, prev_hash: prev, entry_hash: hash };
    batch += csvRow(AUDIT_EXPORT_COLUMNS.map((column) => row[column] as never));
    prev = hash;
    if (batch.length > 1 << 20) {
      await write(batch);
      batch = '';
    }
  }
  await write(batch);
  out.end();
  await once(out, 'finish');
  const { privateKey } = generateKeyPairSync('ed25519');
  return signCheckpoint({ organization_id: organizationId, chain_seq: count, entry_hash: prev, created_at: new Date().toISOString() }, privateKey);
}
