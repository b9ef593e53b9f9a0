/**
 * The sample analytes a formula reads, resolved against the unit operation's own samples (so never
 * another organisation's): each reference names an analyte (ignoring case) and, where the samples hold
 * it in several units, the unit. Each becomes the analyte's points by drawn time, a flagged result a
 * gap; sample-values.ts puts them on the formula's grid.
 */
import type pg from 'pg';
import { sampleReferenceText, type SampleReference } from '@bioprocess/shared/derived/expression';
import type { SamplePoint } from '@bioprocess/shared/derived/sample-values';
import { badRequest } from '../platform/http-error.ts';
import { listSamplesOfUnitOperations } from '../samples/repository.ts';

export interface SampleInput {
  reference: SampleReference;
  analyte: string;
  unit: string;
  points: SamplePoint[];
}

export async function resolveSampleInputs(
  db: pg.Pool,
  organizationId: number,
  unitOperationId: number,
  references: readonly SampleReference[],
): Promise<SampleInput[]> {
  if (references.length === 0) return [];
  const samples = await listSamplesOfUnitOperations(db, organizationId, [unitOperationId]);
  return references.map((reference) => {
    const wanted = reference.analyte.toLowerCase();
    const matches = samples.flatMap((sample) => sample.results
      .filter((result) => result.analyte.toLowerCase() === wanted && (reference.unit === null || result.unit === reference.unit))
      .map((result) => ({ sample, result })));
    const text = sampleReferenceText(reference);
    if (matches.length === 0) {
      throw badRequest(`Unknown sample analyte ${text}: no sample of the unit operation has ${reference.analyte}${reference.unit ? ` in ${reference.unit}` : ''}`);
    }
    const units = [...new Set(matches.map((match) => match.result.unit))];
    if (units.length > 1) {
      throw badRequest(`${text} is stored in ${units.length} units (${units.join(', ')}): name one, as in ${sampleReferenceText({ analyte: reference.analyte, unit: units[0]! })}`);
    }
    return {
      reference,
      analyte: matches[0]!.result.analyte,
      unit: units[0]!,
      // The listing is by drawn time already.
      points: matches.map(({ sample, result }) => ({ t: sample.drawn_at.getTime(), value: result.flag === null ? result.value : Number.NaN })),
    };
  });
}
