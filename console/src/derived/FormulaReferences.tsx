/**
 * The instrument references a formula can use on the unit operation it is previewed on: the
 * instruments holding readings in its window (instruments-with-data), each a button that writes its
 * reference into the formula; the equipment's other instruments behind "Show all instruments of the
 * equipment". Offering every instrument any upload on the equipment ever created made a type
 * reference match many of them.
 */
import { Button, FormGroup } from '@blueprintjs/core';
import { useState } from 'react';
import { useApi } from '../api/hooks.ts';
import { instrumentListSchema, type Instrument } from '../entities/types.ts';
import { offeredInstruments, ShowAllInstrumentsSwitch } from '../unit-operations/ShowAllInstrumentsSwitch.tsx';
import { useInstrumentsWithData } from '../unit-operations/use-instruments-with-data.ts';

/** A reference by name: bare when it is a plain identifier, else quoted (["Feed pump"]). */
export function instrumentReference(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `[${name}]` : `[${JSON.stringify(name)}]`;
}

export function FormulaReferences({ unitOperation, onInsert }: {
  unitOperation: { id: number; equipmentId: number | null } | undefined;
  onInsert: (reference: string) => void;
}) {
  const [showAll, setShowAll] = useState(false);
  const instruments = useApi<Instrument[]>(unitOperation?.equipmentId ? `/api/v1/equipment/${unitOperation.equipmentId}/instruments` : null, instrumentListSchema);
  const withData = useInstrumentsWithData(unitOperation?.id ?? null);
  if (!unitOperation || !instruments.data) return null;
  const offered = offeredInstruments(instruments.data, withData.ids, showAll);
  const hidden = withData.ids ? instruments.data.length - withData.ids.size : 0;
  return (
    <FormGroup label="Instruments" helperText={offered.length === 0 ? 'No instrument holds readings in the unit operation previewed on.'
      : 'Those holding readings in the unit operation previewed on (below); click one to add its reference to the formula.'}>
      <div className="derived-references" data-testid="formula-references">
        {offered.map((instrument) => (
          <Button key={instrument.id} size="small" variant="outlined" text={instrumentReference(instrument.name)}
            intent={withData.ids && !withData.ids.has(instrument.id) ? 'none' : 'primary'}
            onClick={() => onInsert(instrumentReference(instrument.name))} />
        ))}
      </div>
      {withData.ids && (hidden > 0 || showAll) ? <ShowAllInstrumentsSwitch checked={showAll} onChange={setShowAll} hiddenCount={hidden} /> : null}
    </FormGroup>
  );
}
