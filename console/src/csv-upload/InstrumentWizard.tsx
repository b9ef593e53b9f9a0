/**
 * The instrument wizard: steps through the CSV columns marked 'new instrument' one
 * by one ('Save & Next', then 'Save' on the last), creating each instrument on the unit operation's
 * equipment. Names are unique within the equipment, case-insensitively, counting names made earlier in
 * this wizard; the alias is locked to the column name. For a plate or parallel reactors, 'Save all N
 * alike' creates the current and every remaining column at once (one request, all or nothing) with
 * the chosen type and unit, each named as its column. Cancelling aborts with 'Wizard cancelled by user'.
 */
import { useEffect, useState } from 'react';
import { Button, Dialog, DialogBody, DialogFooter, FormGroup, HTMLSelect, InputGroup, Intent, ProgressBar, Tag } from '@blueprintjs/core';
import { catalogueTypeNames, catalogueUnitCodes } from '@bioprocess/shared/instruments/catalogue';
import { CSV_MESSAGES, CSV_TOAST_TITLES } from '@bioprocess/shared/csv/messages';
import { apiRequest } from '../api/client.ts';
import { showToast } from '../components/toaster.ts';
import { instrumentSchema, type Instrument } from '../entities/types.ts';
import { instrumentNameError } from './column-mapping.ts';
import { suggestInstrument } from './instrument-suggestion.ts';
import { unitOptionLabel, useInstrumentCatalogue } from '../settings/use-instrument-catalogue.ts';

export interface InstrumentWizardProps {
  isOpen: boolean;
  equipmentId: number;
  /** The column names to create instruments for, in order. */
  columns: readonly string[];
  /** Names already used on the equipment. */
  existingNames: readonly string[];
  /** Called after each instrument is created. */
  onCreated: (column: string, instrument: Instrument) => void;
  onFinished: () => void;
  onCancelled: () => void;
  /** Columns converted to another unit on upload, with that unit: their instruments are kept in it. */
  convertedUnits?: ReadonlyMap<string, string>;
}

export function InstrumentWizard({ isOpen, equipmentId, columns, existingNames, onCreated, onFinished, onCancelled, convertedUnits }: InstrumentWizardProps) {
  const [step, setStep] = useState(0);
  const [createdNames, setCreatedNames] = useState<string[]>([]);
  const [name, setName] = useState('');
  const [type, setType] = useState('');
  const [unit, setUnit] = useState('');
  const [headerUnit, setHeaderUnit] = useState<string | null>(null);
  const [unitNote, setUnitNote] = useState<string | null>(null);
  const catalogue = useInstrumentCatalogue();
  const ownTypes = catalogue.data?.types;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The wizard works on the columns as they were when it opened; creating one must not reshuffle the steps.
  const [steps, setSteps] = useState<readonly string[]>([]);

  useEffect(() => {
    if (!isOpen) return;
    setSteps(columns);
    setStep(0);
    setCreatedNames([]);
    // Only when opening: later changes to `columns` come from this wizard's own saves.
  }, [isOpen]); // columns deliberately left out

  const column = steps[step] ?? '';
  const isLast = step >= steps.length - 1;

  useEffect(() => {
    if (!column) return;
    const suggestion = suggestInstrument(column, ownTypes ?? []);
    setName(column);
    setType(suggestion.type);
    const converted = convertedUnits?.get(column);
    setUnit(converted ?? suggestion.unit);
    setHeaderUnit(suggestion.headerUnit);
    setUnitNote(converted ? `The column's values are converted to ${converted} on upload.` : suggestion.unitNote);
    setError(null);
    // Again once the organisation's own types have loaded, not on every revalidation (that would undo the user's choices).
  }, [column, ownTypes === undefined]);

  const typeOptions = catalogueTypeNames({ types: ownTypes ?? [] });
  if (type && !typeOptions.includes(type)) typeOptions.push(type);
  const unitOptions = catalogueUnitCodes({ units: catalogue.data?.units ?? [] });
  // The header's unit is offered as written even when no list has it (mL/h, L{STP}/h): any UCUM code is valid.
  if (unit && !unitOptions.includes(unit)) unitOptions.unshift(unit);
  const changeType = (next: string) => {
    setType(next);
    // A type of the organisation's own brings its default unit where the header states none.
    const own = ownTypes?.find((entry) => entry.name === next);
    if (own?.defaultUnit && headerUnit === null) setUnit(own.defaultUnit);
  };
  const unitHelp = unitNote ?? (headerUnit === null ? 'The column states no unit: arbitrary units unless you pick one.'
    : headerUnit === '' ? "The column's header says [] (arbitrary units)." : `From the column's header: ${headerUnit}, stored as written.`);

  const nameProblem = error;

  const cancel = () => {
    if (busy) return;
    showToast({ title: CSV_MESSAGES.wizardCancelled, intent: 'warning' });
    onCancelled();
  };

  const save = async () => {
    const problem = instrumentNameError(name, existingNames, createdNames);
    if (problem) {
      setError(problem);
      return;
    }
    if (!type) {
      setError(null);
      return;
    }
    setBusy(true);
    try {
      const created = await apiRequest<Instrument>('POST', '/api/v1/instruments', {
        name: name.trim(), type, equipment_id: equipmentId, unit: unit || null, alias: column,
      }, { schema: instrumentSchema });
      showToast({ title: CSV_TOAST_TITLES.instrumentCreated, message: `${created.name} for column ${column}`, intent: 'success' });
      setCreatedNames((names) => [...names, created.name]);
      onCreated(column, created);
      if (isLast) onFinished();
      else setStep((current) => current + 1);
    } catch (cause) {
      console.error('Failed to create instrument', cause);
      const message = cause instanceof Error ? cause.message : String(cause);
      setError((cause as { status?: number }).status === 409 ? message : null);
      showToast({ title: CSV_TOAST_TITLES.instrumentCreateFailed, message, intent: 'danger' });
    } finally {
      setBusy(false);
    }
  };

  const remaining = steps.slice(step);
  const saveAllAlike = async () => {
    if (!type) return;
    const names = remaining.map((each, index) => (index === 0 ? name.trim() : each.trim()));
    for (const [index, candidate] of names.entries()) {
      const problem = instrumentNameError(candidate, existingNames, [...createdNames, ...names.slice(0, index)]);
      if (problem) {
        setError(`${remaining[index]}: ${problem}`);
        return;
      }
    }
    setBusy(true);
    try {
      const created = await apiRequest<Instrument[]>('POST', '/api/v1/instruments/bulk', {
        instruments: remaining.map((each, index) => ({ name: names[index], type, equipment_id: equipmentId, unit: unit || null, alias: each })),
      }, { schema: instrumentSchema.array() });
      showToast({ title: CSV_TOAST_TITLES.instrumentCreated, message: `${created.length} instruments (${type}${unit ? `, ${unit}` : ''}) for columns ${remaining[0]} to ${remaining.at(-1)}`, intent: 'success' });
      setCreatedNames((existing) => [...existing, ...created.map((instrument) => instrument.name)]);
      created.forEach((instrument, index) => onCreated(remaining[index]!, instrument));
      onFinished();
    } catch (cause) {
      console.error('Failed to create instruments', cause);
      const message = cause instanceof Error ? cause.message : String(cause);
      setError((cause as { status?: number }).status === 409 ? message : null);
      showToast({ title: CSV_TOAST_TITLES.instrumentCreateFailed, message, intent: 'danger' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog isOpen={isOpen && steps.length > 0} onClose={cancel} title="Set up instruments for CSV columns" icon="wrench"
      className="app-dialog csv-wizard" style={{ width: 560 }} canOutsideClickClose={false}>
      <form onSubmit={(event) => { event.preventDefault(); void save(); }} noValidate>
        <DialogBody>
          <div className="csv-wizard-step">
            <span>Column <Tag minimal intent="primary" className="csv-wizard-column">{column}</Tag></span>
            <span className="bp6-text-muted">Step {Math.min(step + 1, steps.length)} of {steps.length}</span>
          </div>
          <ProgressBar value={steps.length ? step / steps.length : 0} stripes={false} intent={Intent.PRIMARY} className="csv-wizard-progress" />
          <FormGroup label="Name" labelFor="wizard-name" labelInfo="(required)" intent={nameProblem ? 'danger' : 'none'} helperText={nameProblem ?? undefined}>
            <InputGroup id="wizard-name" autoFocus value={name} intent={nameProblem ? 'danger' : 'none'}
              onChange={(event) => { setName(event.target.value); setError(null); }} />
          </FormGroup>
          <FormGroup label="Type" labelFor="wizard-type" labelInfo="(required)" intent={!type ? 'warning' : 'none'}>
            <HTMLSelect id="wizard-type" fill value={type} onChange={(event) => changeType(event.target.value)}>
              <option value="" disabled>Select type...</option>
              {typeOptions.map((option) => <option key={option} value={option}>{option}</option>)}
            </HTMLSelect>
          </FormGroup>
          <FormGroup label="Unit" labelFor="wizard-unit" labelInfo="(optional)" helperText={unitHelp} intent={unitNote && !unit ? 'warning' : 'none'}>
            <HTMLSelect id="wizard-unit" fill value={unit} onChange={(event) => setUnit(event.target.value)}>
              <option value="">No unit</option>
              {unitOptions.map((option) => <option key={option} value={option}>{unitOptionLabel(catalogue.data, option)}</option>)}
            </HTMLSelect>
          </FormGroup>
          <FormGroup label="Alias" labelFor="wizard-alias" helperText="The alias is the CSV column name, so later uploads of the same file find this instrument.">
            <InputGroup id="wizard-alias" value={column} disabled readOnly />
          </FormGroup>
        </DialogBody>
        <DialogFooter actions={(
          <>
            <Button text="Cancel" variant="minimal" onClick={cancel} disabled={busy} />
            {remaining.length > 1 && (
              <Button text={`Save all ${remaining.length} alike`} title={`Creates this and the next ${remaining.length - 1} column(s) at once with this type and unit, each named as its column`}
                onClick={() => void saveAllAlike()} loading={busy} disabled={!type || !name.trim()} data-testid="wizard-save-all" />
            )}
            <Button type="submit" intent={Intent.PRIMARY} loading={busy} disabled={!type || !name.trim()} text={isLast ? 'Save' : 'Save & Next'} />
          </>
        )} />
      </form>
    </Dialog>
  );
}
