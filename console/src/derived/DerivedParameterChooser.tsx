/**
 * Derived parameters on the unit-operation detail: the organisation's formulas as checkboxes, each
 * chosen one computed by the server over the unit operation and drawn dashed. A formula this unit
 * operation cannot compute (no such instrument, a property not set) says why under its name.
 */
import { Card, Checkbox, Colors, H4 } from '@blueprintjs/core';
import useSWR from 'swr';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { derivedParameterListSchema, derivedSeriesSchema, type DerivedParameterView, type DerivedSeriesView } from './derived-model.ts';

export type DerivedResults = Map<number, { series?: DerivedSeriesView; error?: string }>;

/** Each chosen formula's series over the unit operation (computed in parallel, one failure never hides the others). */
export function useDerivedSeries(unitOperationId: number | null, ids: readonly number[]): DerivedResults {
  const key = unitOperationId !== null && ids.length > 0 ? ['derived-series', unitOperationId, ids.join(',')] : null;
  const { data } = useSWR(key, async () => {
    const settled = await Promise.allSettled(ids.map((id) =>
      apiRequest<DerivedSeriesView>('GET', `/api/v1/unit-operations/${unitOperationId}/derived/${id}`, undefined, { schema: derivedSeriesSchema })));
    return new Map(ids.map((id, index) => {
      const outcome = settled[index]!;
      return [id, outcome.status === 'fulfilled' ? { series: outcome.value } : { error: outcome.reason instanceof Error ? outcome.reason.message : 'Failed' }];
    }));
  });
  return data ?? new Map();
}

export interface DerivedParameterChooserProps {
  selected: ReadonlySet<number>;
  results: DerivedResults;
  colorOf: (derivedId: number) => string;
  onToggle: (derived: DerivedParameterView, checked: boolean) => void;
}

export function DerivedParameterChooser({ selected, results, colorOf, onToggle }: DerivedParameterChooserProps) {
  const list = useApi<DerivedParameterView[]>('/api/v1/derived-parameters', derivedParameterListSchema);
  if (!list.data || list.data.length === 0) return null;
  return (
    <Card className="uo-card uo-parameters" data-testid="derived-parameter-list">
      <H4>Derived parameters</H4>
      {list.data.map((derived) => {
        const error = selected.has(derived.id) ? results.get(derived.id)?.error : undefined;
        return (
          <div key={derived.id}>
            <Checkbox checked={selected.has(derived.id)} title={derived.expression}
              onChange={(event) => onToggle(derived, event.currentTarget.checked)}
              labelElement={(
                <span className="uo-parameter-label">
                  <span className="uo-parameter-swatch uo-parameter-swatch-dashed" style={{ borderColor: colorOf(derived.id) }} />
                  <span className="uo-parameter-text">
                    <span className="uo-parameter-name">{derived.name}</span>
                    <span className="uo-parameter-detail">{derived.unit ? `[${derived.unit}]` : 'formula'}</span>
                  </span>
                </span>
              )} />
            {error ? <p className="uo-derived-error" style={{ color: Colors.RED3 }} role="alert">{error}</p> : null}
          </div>
        );
      })}
    </Card>
  );
}
