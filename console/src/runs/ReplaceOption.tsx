/**
 * The upload's replace option (off by default): replacing clears the mapped instruments' readings
 * inside the unit operation's window before the file's are written, never anything outside it. When
 * ticked, the counts of what would go come from the server's dry run.
 */
import { Checkbox } from '@blueprintjs/core';
import type { ColumnState } from '../csv-upload/column-mapping.ts';
import { ReadingsToRemove } from './ReadingsToRemove.tsx';

export interface ReplaceOptionProps {
  unitOperationId: number;
  columns: readonly ColumnState[];
  checked: boolean;
  onChange: (checked: boolean) => void;
}

export function ReplaceOption({ unitOperationId, columns, checked, onChange }: ReplaceOptionProps) {
  const instrumentIds = columns.flatMap((column) => (column.selected && column.assignment.kind === 'existing' ? [column.assignment.instrumentId] : []));
  return (
    <div className="csv-replace-option">
      <Checkbox checked={checked} onChange={(event) => onChange(event.currentTarget.checked)}
        label="Replace this unit operation's existing readings of the mapped instruments" />
      {checked && instrumentIds.length > 0 ? <ReadingsToRemove unitOperationId={unitOperationId} instrumentIds={instrumentIds} verb="Replacing" /> : null}
    </div>
  );
}
