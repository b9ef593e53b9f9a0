/** The edit preview: the first 20 time points already stored, from at most 100 points fetched. */
import { useMemo } from 'react';
import { Callout, HTMLTable, Spinner } from '@blueprintjs/core';
import { readingListSchema } from '@bioprocess/shared/timeseries';
import { useApi } from '../api/hooks.ts';
import { formatDate } from '../entities/format.ts';
import type { Instrument } from '../entities/types.ts';
import type { Reading } from '../charts/series-model.ts';
import { EDIT_PREVIEW_FETCH_LIMIT, editPreviewTable } from './edit-preview.ts';

export function ExistingDataPreview({ unitOperationId, instruments }: { unitOperationId: number; instruments: readonly Instrument[] }) {
  const readings = useApi<Reading[]>(`/api/v1/unit-operations/${unitOperationId}/time-series-data?limit=${EDIT_PREVIEW_FETCH_LIMIT}`, readingListSchema);
  const table = useMemo(() => editPreviewTable(readings.data ?? []), [readings.data]);
  if (readings.isLoading) return <Spinner size={16} />;
  if (readings.error) return <Callout compact intent="warning">Could not load the data already stored: {readings.error.message}</Callout>;
  if (table.rows.length === 0) return <p className="bp6-text-muted">No data stored for this unit operation yet.</p>;
  const nameOf = (id: number) => instruments.find((i) => i.id === id)?.name ?? `Instrument ${id}`;
  return (
    <details className="csv-existing" open>
      <summary>Data already stored (first {table.rows.length} time points)</summary>
      <div className="csv-preview-scroll">
        <HTMLTable compact striped className="csv-preview-table" data-testid="csv-edit-preview">
          <thead>
            <tr><th>Time</th>{table.instrumentIds.map((id) => <th key={id}>{nameOf(id)}</th>)}</tr>
          </thead>
          <tbody>
            {table.rows.map((row) => (
              <tr key={row.ts}>
                <td>{formatDate(new Date(row.ts))}</td>
                {table.instrumentIds.map((id) => <td key={id}>{formatValue(row.values.get(id))}</td>)}
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      </div>
    </details>
  );
}

function formatValue(value: number | null | undefined): string {
  if (value === null || value === undefined) return '';
  return Number.isInteger(value) ? String(value) : value.toPrecision(6).replace(/\.?0+$/, '');
}
