/** Export Data on the runs overview: the organisation's records of one kind as CSV or JSON. */
import { FormGroup, HTMLSelect, Radio, RadioGroup, Callout, Intent } from '@blueprintjs/core';
import { useId, useState } from 'react';
import { RECORD_EXPORT_ENTITIES, type RecordExportEntity } from '@bioprocess/shared/exports';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { downloadExport } from './export-request.ts';

const ENTITY_LABELS: Record<RecordExportEntity, string> = {
  runs: 'Runs', unit_operations: 'Unit operations', facilities: 'Facilities', equipment: 'Equipment', instruments: 'Instruments', comments: 'Comments',
};

export function RecordsExportDialog({ isOpen, onClose }: { isOpen: boolean; onClose: () => void }) {
  const [entity, setEntity] = useState<RecordExportEntity>('runs');
  const [format, setFormat] = useState<'csv' | 'json'>('csv');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Its own radio-group name: a group named like another one on the page would uncheck it.
  const formatGroup = useId();

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await downloadExport(`/api/v1/exports/records?entity=${entity}&format=${format}`, `${entity}.${format}`);
      showToast({ title: 'Export downloaded', intent: 'success' });
      onClose();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : 'The export failed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormDialog title="Export Data" icon="export" isOpen={isOpen} onClose={onClose} onSubmit={submit} submitLabel="Export" busy={busy} size="md" steady
      description="Your organisation's records as a file. Time series are exported from a run, a unit operation or the compare page.">
      <FormGroup label="Records" labelFor="records-export-entity">
        <HTMLSelect id="records-export-entity" fill value={entity} onChange={(event) => setEntity(event.target.value as RecordExportEntity)}>
          {RECORD_EXPORT_ENTITIES.map((value) => <option key={value} value={value}>{ENTITY_LABELS[value]}</option>)}
        </HTMLSelect>
      </FormGroup>
      <RadioGroup name={formatGroup} label="Format" selectedValue={format} onChange={(event) => setFormat(event.currentTarget.value as 'csv' | 'json')}>
        <Radio value="csv" label="CSV" />
        <Radio value="json" label="JSON" />
      </RadioGroup>
      {error ? <Callout intent={Intent.DANGER} title="Export failed">{error}</Callout> : null}
    </FormDialog>
  );
}
