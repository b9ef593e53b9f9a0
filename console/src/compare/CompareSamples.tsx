/**
 * The samples of Compare's selected runs: read per unit operation (one that fails leaves the others
 * drawn), and the chooser of their analytes beside the parameters.
 */
import { Checkbox } from '@blueprintjs/core';
import useSWR from 'swr';
import { z } from 'zod';
import { sampleSchema } from '@bioprocess/shared/samples';
import { apiRequest } from '../api/client.ts';
import type { SampleView } from '../samples/grid-model.ts';
import type { SampleAnalyte } from '../samples/sample-series.ts';

const sampleListSchema = z.array(sampleSchema);

/** Each unit operation's samples, by unit operation id (an empty list for one that could not be read). */
export function useCompareSamples(operationIds: readonly number[]): Map<number, SampleView[]> | undefined {
  const samples = useSWR(operationIds.length ? ['compare-samples', operationIds.join(',')] : null, async () => {
    const entries = await Promise.all(operationIds.map(async (id) => [id, await apiRequest<SampleView[]>('GET', `/api/v1/unit-operations/${id}/samples`, undefined, { schema: sampleListSchema })
      .catch((error: unknown) => { console.error('Failed to fetch samples', error); return [] as SampleView[]; })] as const));
    return new Map(entries);
  }, { revalidateOnFocus: false });
  return samples.data;
}

export function SampleAnalyteChooser({ analytes, chosen, onToggle }: { analytes: readonly SampleAnalyte[]; chosen: readonly string[]; onToggle: (key: string, checked: boolean) => void }) {
  if (analytes.length === 0) return null;
  return (
    <div className="compare-derived" data-testid="compare-samples">
      <p className="compare-picker-title">Samples</p>
      <div className="compare-parameter-groups">
        {analytes.map((entry) => (
          <Checkbox key={entry.key} inline checked={chosen.includes(entry.key)} label={`${entry.analyte} [${entry.unit}]`}
            title={`${entry.count} results`} onChange={(event) => onToggle(entry.key, event.currentTarget.checked)} />
        ))}
      </div>
    </div>
  );
}
