/**
 * Settings > Instruments: the instrument types and units the organisation adds to the spec's, offered
 * in every instrument picker and the CSV wizard. Every member sees them; admins add and remove them.
 * Units are UCUM codes (the server checks them and names a code it refuses).
 */
import { Button, FormGroup, H5, HTMLTable, InputGroup, Intent, NonIdealState } from '@blueprintjs/core';
import { useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { INSTRUMENT_CATALOGUE_PATH, useInstrumentCatalogue, type InstrumentCatalogue } from './use-instrument-catalogue.ts';

type OwnType = InstrumentCatalogue['types'][number];
type OwnUnit = InstrumentCatalogue['units'][number];
import { useSettingsAction } from './use-settings-action.ts';

export function InstrumentCatalogueTab() {
  const { permissions } = useAuth();
  const catalogue = useInstrumentCatalogue();
  const canEdit = permissions.canManageUsers;
  const { busy, run } = useSettingsAction();
  const [typeName, setTypeName] = useState('');
  const [typeUnit, setTypeUnit] = useState('');
  const [unitCode, setUnitCode] = useState('');
  const [unitLabel, setUnitLabel] = useState('');

  const reload = () => catalogue.mutate();
  const addType = () => run(
    () => apiRequest('POST', `${INSTRUMENT_CATALOGUE_PATH}/types`, { name: typeName, default_unit: typeUnit.trim() || null }),
    { success: 'Instrument type added', failure: 'Failed to add instrument type', then: () => { setTypeName(''); setTypeUnit(''); return reload(); } },
  );
  const addUnit = () => run(
    () => apiRequest('POST', `${INSTRUMENT_CATALOGUE_PATH}/units`, { code: unitCode, label: unitLabel }),
    { success: 'Unit added', failure: 'Failed to add unit', then: () => { setUnitCode(''); setUnitLabel(''); return reload(); } },
  );
  const remove = (kind: 'types' | 'units', id: number) => run(
    () => apiRequest('DELETE', `${INSTRUMENT_CATALOGUE_PATH}/${kind}/${id}`),
    { success: kind === 'types' ? 'Instrument type removed' : 'Unit removed', failure: 'Failed to remove', then: reload },
  );

  const data = catalogue.data;
  return (
    <div data-testid="instrument-catalogue">
      <p className="bp6-text-muted">
        The {data?.builtInTypes.length ?? ''} built-in instrument types and {data?.builtInUnits.length ?? ''} built-in units are always offered.
        Types and units added here join them in every instrument picker and the CSV wizard of your organisation.
        Removing one leaves the instruments that use it as they are.
      </p>
      <section className="app-settings-section" data-testid="catalogue-types">
        <H5>Instrument types</H5>
        <EntryTable<OwnType> rows={data?.types} empty="No instrument types of your own yet."
          columns={['Name', 'Default unit']} cells={(entry) => [entry.name, entry.defaultUnit ?? '']}
          onRemove={canEdit ? (entry) => remove('types', entry.id) : undefined} busy={busy} />
        {canEdit ? (
          <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); void addType(); }}>
            <FormGroup label="Name" labelFor="catalogue-type-name" className="app-settings-grow">
              <InputGroup id="catalogue-type-name" value={typeName} onChange={(event) => setTypeName(event.target.value)} />
            </FormGroup>
            <FormGroup label="Default unit" labelFor="catalogue-type-unit" labelInfo="(optional)" className="app-settings-grow">
              <InputGroup id="catalogue-type-unit" value={typeUnit} placeholder="e.g. pF/cm" onChange={(event) => setTypeUnit(event.target.value)} />
            </FormGroup>
            <Button type="submit" intent={Intent.PRIMARY} text="Add Type" loading={busy} disabled={busy || !typeName.trim()} />
          </form>
        ) : null}
      </section>
      <section className="app-settings-section" data-testid="catalogue-units">
        <H5>Units</H5>
        <p className="bp6-text-muted">A unit is a UCUM code, such as umol/L, 10*9/L, pF/cm or {'{cells}'}/mL.</p>
        <EntryTable<OwnUnit> rows={data?.units} empty="No units of your own yet."
          columns={['Code', 'Label']} cells={(entry) => [entry.code, entry.label]}
          onRemove={canEdit ? (entry) => remove('units', entry.id) : undefined} busy={busy} />
        {canEdit ? (
          <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); void addUnit(); }}>
            <FormGroup label="UCUM code" labelFor="catalogue-unit-code" className="app-settings-grow">
              <InputGroup id="catalogue-unit-code" value={unitCode} onChange={(event) => setUnitCode(event.target.value)} />
            </FormGroup>
            <FormGroup label="Label" labelFor="catalogue-unit-label" className="app-settings-grow">
              <InputGroup id="catalogue-unit-label" value={unitLabel} onChange={(event) => setUnitLabel(event.target.value)} />
            </FormGroup>
            <Button type="submit" intent={Intent.PRIMARY} text="Add Unit" loading={busy} disabled={busy || !unitCode.trim() || !unitLabel.trim()} />
          </form>
        ) : null}
      </section>
    </div>
  );
}

interface EntryTableProps<T> {
  rows: readonly T[] | undefined;
  empty: string;
  columns: readonly string[];
  cells: (entry: T) => string[];
  onRemove?: (entry: T) => void;
  busy: boolean;
}

function EntryTable<T>({ rows, empty, columns, cells, onRemove, busy }: EntryTableProps<T>) {
  if (rows && rows.length === 0) return <NonIdealState icon="list" description={empty} layout="horizontal" />;
  return (
    <HTMLTable compact striped className="app-settings-table">
      <thead><tr>{columns.map((column) => <th key={column}>{column}</th>)}{onRemove ? <th aria-label="Actions" /> : null}</tr></thead>
      <tbody>
        {(rows ?? []).map((entry) => {
          const values = cells(entry);
          return (
            <tr key={values[0]}>
              {values.map((value, index) => <td key={columns[index]}>{value}</td>)}
              {onRemove ? (
                <td><Button size="small" variant="minimal" icon="trash" intent={Intent.DANGER} aria-label={`Remove ${values[0]}`} disabled={busy} onClick={() => onRemove(entry)} /></td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </HTMLTable>
  );
}
