/**
 * One grid save applied inside one transaction: deletions first (so a new row may reuse a deleted
 * tube's id), then each row replaces the sample it names (by `id`, else by its sample id) or creates
 * one. A row identical to what is stored writes and audits nothing. Every sample id that the save
 * would give two samples is a bad cell, so the deferred unique constraint is only the last guard.
 */
import type pg from 'pg';
import { SAMPLE_MESSAGES, type Sample, type SampleCellError, type SampleGridSaveParsed } from '@bioprocess/shared/samples';
import { notFound } from '../platform/http-error.ts';
import { SampleGridError } from './grid-errors.ts';
import {
  deleteSamples, insertSample, isUnchanged, lockUnitOperationSamples, readSamples, replaceSample, toSample,
  type SampleRow, type SampleValues,
} from './repository.ts';

export type AuditSampleChange = (action: 'create' | 'update' | 'delete', id: number, before: Sample | null, after: Sample | null) => Promise<void>;

export function sampleValues(sample: SampleGridSaveParsed['samples'][number]): SampleValues {
  return { sampleId: sample.sample_id, drawnAt: sample.drawn_at, notes: sample.notes, results: sample.results };
}

export async function saveSampleGrid(
  client: pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  body: SampleGridSaveParsed,
  audit: AuditSampleChange,
): Promise<{ created: number; updated: number; deleted: number }> {
  const existing = await lockUnitOperationSamples(client, unitOperationId);
  const byId = new Map(existing.map((row) => [Number(row.id), row]));

  for (const id of body.delete_ids) if (!byId.has(id)) throw notFound(SAMPLE_MESSAGES.notFound);
  const deleted = new Set(body.delete_ids);

  // Rows naming their sample by id claim it first; the others take an unclaimed sample with their sample id.
  const claimed = new Set<number>();
  for (const sample of body.samples) {
    if (sample.id === undefined) continue;
    if (!byId.has(sample.id)) throw notFound(SAMPLE_MESSAGES.notFound);
    claimed.add(sample.id);
  }
  const unclaimedBySampleId = new Map(
    existing.filter((row) => !claimed.has(Number(row.id)) && !deleted.has(Number(row.id))).map((row) => [row.sample_id, row]),
  );
  const targets: Array<SampleRow | null> = body.samples.map((sample) => {
    if (sample.id !== undefined) return byId.get(sample.id)!;
    const match = unclaimedBySampleId.get(sample.sample_id) ?? null;
    if (match) claimed.add(Number(match.id));
    return match;
  });

  // A sample id stays taken by every stored sample that this save neither deletes nor rewrites.
  const keptSampleIds = new Set(existing.filter((row) => !claimed.has(Number(row.id)) && !deleted.has(Number(row.id))).map((row) => row.sample_id));
  const taken: SampleCellError[] = [];
  body.samples.forEach((sample, index) => {
    if (keptSampleIds.has(sample.sample_id)) {
      taken.push({ row: index + 1, column: 'Sample ID', message: `Sample ID '${sample.sample_id}' is already used by another sample of this unit operation.` });
    }
  });
  if (taken.length > 0) throw new SampleGridError(taken);

  await deleteSamples(client, organizationId, [...deleted]);
  for (const id of deleted) await audit('delete', id, toSample(byId.get(id)!), null);

  let created = 0;
  let updated = 0;
  for (const [index, sample] of body.samples.entries()) {
    const values = sampleValues(sample);
    const target = targets[index]!;
    if (target && isUnchanged(target, values)) continue;
    if (target) {
      await replaceSample(client, organizationId, Number(target.id), values);
      const [after] = await readSamples(client, organizationId, [Number(target.id)]);
      await audit('update', Number(target.id), toSample(target), toSample(after!));
      updated += 1;
    } else {
      const id = await insertSample(client, organizationId, unitOperationId, values);
      const [after] = await readSamples(client, organizationId, [id]);
      await audit('create', id, null, toSample(after!));
      created += 1;
    }
  }
  return { created, updated, deleted: deleted.size };
}
