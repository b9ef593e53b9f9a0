/**
 * The sample analytes a formula can use on the unit operation it is previewed on, each a button that
 * writes its reference into the formula: `sample("Glucose")`, with the unit when the samples hold the
 * analyte in more than one (the api refuses the bare name then).
 */
import { Button, FormGroup } from '@blueprintjs/core';
import { z } from 'zod';
import { sampleSchema } from '@bioprocess/shared/samples';
import { sampleReferenceText } from '@bioprocess/shared/derived/expression';
import { useApi } from '../api/hooks.ts';
import type { SampleView } from '../samples/grid-model.ts';
import { sampleAnalytes, type SampleAnalyte } from '../samples/sample-series.ts';

const sampleListSchema = z.array(sampleSchema);

/** Each analyte's reference: by name alone unless another entry shares its name in another unit. */
export function sampleReferences(analytes: readonly SampleAnalyte[]): Array<{ key: string; reference: string }> {
  const unitsOf = new Map<string, number>();
  for (const entry of analytes) unitsOf.set(entry.analyte.toLowerCase(), (unitsOf.get(entry.analyte.toLowerCase()) ?? 0) + 1);
  return analytes.map((entry) => ({
    key: entry.key,
    reference: sampleReferenceText({ analyte: entry.analyte, unit: unitsOf.get(entry.analyte.toLowerCase())! > 1 ? entry.unit : null }),
  }));
}

export function SampleReferences({ unitOperationId, onInsert }: { unitOperationId: number | undefined; onInsert: (reference: string) => void }) {
  const samples = useApi<SampleView[]>(unitOperationId ? `/api/v1/unit-operations/${unitOperationId}/samples` : null, sampleListSchema);
  const references = sampleReferences(sampleAnalytes(samples.data ?? []));
  if (references.length === 0) return null;
  return (
    <FormGroup label="Sample analytes" helperText="Click one to add it; values between samples are taken as chosen below.">
      <div className="derived-references" data-testid="formula-sample-references">
        {references.map((entry) => (
          <Button key={entry.key} size="small" variant="outlined" intent="success" text={entry.reference} onClick={() => onInsert(entry.reference)} />
        ))}
      </div>
    </FormGroup>
  );
}
