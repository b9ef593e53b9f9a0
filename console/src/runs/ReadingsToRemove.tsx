/**
 * What a unit operation's deletion (or an upload replacing some instruments' readings) would remove,
 * per instrument, from the server's dry run: shown before the user confirms, so nothing is deleted
 * that the user has not seen counted.
 */
import { Callout, HTMLTable, Intent, Spinner } from '@blueprintjs/core';
import { deletionPreviewSchema, type DeletionPreview } from '@bioprocess/shared/unit-operation-windows';
import { useApi } from '../api/hooks.ts';
import type { Camelize } from '../entities/types.ts';
import { formatCount } from '../components/count-format.ts';

type Preview = Camelize<DeletionPreview>;

export function deletionPreviewPath(unitOperationId: number, instrumentIds?: readonly number[]): string {
  const only = instrumentIds && instrumentIds.length > 0 ? `?instrument_ids=${[...instrumentIds].sort((a, b) => a - b).join(',')}` : '';
  return `/api/v1/unit-operations/${unitOperationId}/deletion-preview${only}`;
}

export interface ReadingsToRemoveProps {
  unitOperationId: number;
  /** Only these instruments (a replacing upload's); all of the equipment's when left out. */
  instrumentIds?: readonly number[];
  /** What removes them, for the sentence above the counts ("Deleting", "Replacing"). */
  verb: string;
}

export function ReadingsToRemove({ unitOperationId, instrumentIds, verb }: ReadingsToRemoveProps) {
  const preview = useApi<Preview>(deletionPreviewPath(unitOperationId, instrumentIds), deletionPreviewSchema, { revalidateOnFocus: false });
  if (preview.error) {
    return <Callout intent={Intent.WARNING} compact>Could not count the readings that would be removed: {preview.error.message}</Callout>;
  }
  if (!preview.data) return <Spinner size={16} />;
  const { instruments, totalReadings } = preview.data;
  if (totalReadings === 0) {
    return <p className="bp6-text-muted" data-testid="readings-to-remove" data-total="0">{verb} removes no readings: none are stored in this unit operation&apos;s window.</p>;
  }
  return (
    <div data-testid="readings-to-remove" data-total={totalReadings}>
      <p>{verb} removes {formatCount(totalReadings)} reading(s) inside this unit operation&apos;s window, and none outside it:</p>
      <HTMLTable compact striped>
        <thead><tr><th>Instrument</th><th>Readings removed</th></tr></thead>
        <tbody>
          {instruments.filter((instrument) => instrument.readings > 0).map((instrument) => (
            <tr key={instrument.instrumentId}><td>{instrument.name}</td><td>{formatCount(instrument.readings)}</td></tr>
          ))}
        </tbody>
      </HTMLTable>
    </div>
  );
}
