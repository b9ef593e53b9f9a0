/**
 * Parts of the CSV section about how the file is read: the time zone panel (the zone the upload will
 * use, why, and the first timestamps as full UTC instants), the long-format panel (one key column, or
 * several together, split into one instrument per key, with the instruments it still needs created
 * in one go) and the row filters (rows left out: calibrators, controls, blanks).
 */
import { useMemo, useState } from 'react';
import { Button, Callout, Checkbox, FormGroup, HTMLSelect, HTMLTable, InputGroup, Intent, Radio, RadioGroup, Tag } from '@blueprintjs/core';
import type { DuplicatePolicy } from '@bioprocess/shared/ingest/requests';
import { catalogueTypeNames, catalogueUnitCodes } from '@bioprocess/shared/instruments/catalogue';
import { CSV_TOAST_TITLES } from '@bioprocess/shared/csv/messages';
import { apiRequest } from '../api/client.ts';
import { showToast } from '../components/toaster.ts';
import { instrumentSchema, type Instrument } from '../entities/types.ts';
import { suggestInstrument } from './instrument-suggestion.ts';
import { unitOptionLabel, useInstrumentCatalogue } from '../settings/use-instrument-catalogue.ts';
import { MAX_KEY_COLUMNS, ROW_FILTER_LIMITS, type RowFilter } from '@bioprocess/shared/csv/index';
import {
  timeZoneOptions, type LongFormatSeries, type PreviewDuplicates, type RowFilterDraft, type TimestampPreview, type ZoneChoice,
} from './reading-options.ts';

const DUPLICATE_LABELS: Record<DuplicatePolicy, string> = {
  refuse: 'Refuse the file (nothing is written; the job names the rows)',
  'keep-first': 'Keep the first row of each time',
  'keep-last': 'Keep the last row of each time',
};

/**
 * What happens to rows that land on one instrument and time (the server checks the whole file, after
 * reading the times); shown open when the preview already repeats a time. Also the values that mean
 * "no value" (`-9999`), which are otherwise stored as the numbers they are.
 */
export function RowChoices({ duplicates, onDuplicates, missingValues, onMissingValues, preview }: {
  duplicates: DuplicatePolicy; onDuplicates: (policy: DuplicatePolicy) => void;
  missingValues: string; onMissingValues: (text: string) => void; preview: PreviewDuplicates;
}) {
  return (
    <div className="csv-row-choices" data-testid="csv-duplicates" data-preview-duplicates={preview.count}>
      {preview.count > 0 && (
        <Callout intent={Intent.WARNING} compact icon="duplicate" data-testid="csv-duplicates-notice">
          {`The first rows already repeat ${preview.count} time(s) (first: ${preview.firstTime}). Rows with the same instrument and time cannot all be stored: choose what happens.`}
        </Callout>
      )}
      <RadioGroup inline label="Rows with the same instrument and time" selectedValue={duplicates}
        onChange={(event) => onDuplicates(event.currentTarget.value as DuplicatePolicy)}>
        {(Object.keys(DUPLICATE_LABELS) as DuplicatePolicy[]).map((policy) => (
          <Radio key={policy} value={policy} label={DUPLICATE_LABELS[policy]} data-testid={`csv-duplicates-${policy}`} />
        ))}
      </RadioGroup>
      <FormGroup inline label="Values meaning no value" labelFor="csv-missing-values"
        helperText="Stored as missing and counted, like flags such as < 0.4, OVRFLW or ?????; without them, -9999 is a number.">
        <InputGroup id="csv-missing-values" placeholder="e.g. -9999" value={missingValues} onChange={(event) => onMissingValues(event.target.value)} />
      </FormGroup>
    </div>
  );
}

export function TimeZonePanel({ choice, chosen, onChoose, timestamps }: {
  choice: ZoneChoice; chosen: string; onChoose: (zone: string) => void; timestamps: readonly TimestampPreview[];
}) {
  const options = useMemo(() => timeZoneOptions([chosen]), [chosen]);
  return (
    <div className="csv-zone" data-testid="csv-time-zone" data-zone={choice.zone} data-zone-source={choice.source}>
      <div className="csv-zone-choice">
        <FormGroup inline label="Time zone" labelFor="csv-time-zone-select" className="csv-zone-group">
          {choice.source === 'file'
            ? <Tag intent="primary" icon="globe" large data-testid="csv-time-zone-name">{choice.zone}</Tag>
            : (
              <HTMLSelect id="csv-time-zone-select" value={chosen} onChange={(event) => onChoose(event.target.value)} data-testid="csv-time-zone-name">
                {options.map((zone) => <option key={zone} value={zone}>{zone}</option>)}
              </HTMLSelect>
            )}
        </FormGroup>
        <span className="bp6-text-muted">{choice.description}</span>
      </div>
      {timestamps.length > 0 && (
        <HTMLTable compact className="csv-zone-table" data-testid="csv-zone-preview">
          <thead><tr><th>In the file</th><th>Stored as</th></tr></thead>
          <tbody>
            {timestamps.map((timestamp, index) => (
              <tr key={index}>
                <td>{timestamp.raw} <Tag minimal>{choice.zone}</Tag></td>
                <td>{timestamp.utc ?? <span className="bp6-text-muted">not a timestamp: the row is skipped</span>}</td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      )}
    </div>
  );
}

export interface LongFormatPanelProps {
  headers: readonly string[];
  /** The key columns, in order: one, or several whose values together name a series (well x channel). */
  keyColumns: readonly string[];
  onKeyColumns: (columns: string[]) => void;
  keys: readonly string[];
  picked: ReadonlySet<string>;
  onPicked: (keys: Set<string>) => void;
  series: readonly LongFormatSeries[];
  equipmentId: number | null;
  busy: boolean;
  onCreated: (instruments: Instrument[]) => void;
  partial: boolean;
  /** The unit the value column is converted to, which the new instruments are kept in. */
  convertedUnit?: string | null;
}

/** The picker's choices with the chosen value kept, when it came from a header no list has (mL/h). */
function withCurrent(options: string[], current: string): string[] {
  return current && !options.includes(current) ? [current, ...options] : options;
}

/**
 * The key columns: the first picker chooses the column that says which series a row is; a further
 * picker adds a column whose values, together with the first's, name the series (well x channel).
 */
function KeyColumnsPicker({ headers, keyColumns, onKeyColumns }: Pick<LongFormatPanelProps, 'headers' | 'keyColumns' | 'onKeyColumns'>) {
  const change = (position: number, column: string) => {
    const next = [...keyColumns];
    if (column === '') next.splice(position, 1);
    else next[position] = column;
    onKeyColumns([...new Set(next)]);
  };
  const pickers = keyColumns.length < MAX_KEY_COLUMNS && keyColumns.length > 0 ? [...keyColumns, ''] : keyColumns.length === 0 ? [''] : [...keyColumns];
  return (
    <div className="csv-long-key-columns" data-testid="csv-key-columns">
      {pickers.map((chosen, position) => (
        <FormGroup key={position} inline label={position === 0 ? 'Key column' : 'and'} labelFor={position === 0 ? 'csv-key-column' : `csv-key-column-${position + 1}`}>
          <HTMLSelect id={position === 0 ? 'csv-key-column' : `csv-key-column-${position + 1}`} value={chosen}
            aria-label={position === 0 ? 'Key column' : `Key column ${position + 1}`} onChange={(event) => change(position, event.target.value)}>
            <option value="" disabled={position === 0}>{position === 0 ? 'Choose...' : keyColumns.length > position ? 'None' : 'Add a key column...'}</option>
            {headers.filter((header) => header === chosen || !keyColumns.includes(header)).map((header) => <option key={header} value={header}>{header}</option>)}
          </HTMLSelect>
        </FormGroup>
      ))}
    </div>
  );
}

const FILTER_OPERATOR_LABELS: Record<RowFilter['operator'], string> = {
  equals: 'is one of', not_equals: 'is none of', matches: 'matches (* any, ? one)',
};

/**
 * Rows to leave out before reading: rows whose column is one of some values, none of them, or
 * matches a pattern. Suggested when a column like Sample Type names calibrators, controls or blanks;
 * the server counts what each filter left out, by value, in the upload's result.
 */
export function RowFiltersPanel({ headers, drafts, onDrafts, leftOut, shown }: {
  headers: readonly string[]; drafts: readonly RowFilterDraft[]; onDrafts: (drafts: RowFilterDraft[]) => void;
  /** Rows of the preview the filters leave out, of `shown`. */
  leftOut: number; shown: number;
}) {
  const update = (index: number, change: Partial<RowFilterDraft>) => onDrafts(drafts.map((draft, at) => (at === index ? { ...draft, ...change } : draft)));
  return (
    <div className="csv-row-filters" data-testid="csv-row-filters" data-left-out={leftOut}>
      <strong>Rows left out</strong>
      {drafts.map((draft, index) => (
        <div className="csv-row-filter" key={index} data-testid="csv-row-filter">
          <span>Leave out rows where</span>
          <HTMLSelect aria-label={`Row filter ${index + 1} column`} value={draft.column} onChange={(event) => update(index, { column: event.target.value })}>
            <option value="" disabled>Column...</option>
            {headers.map((header) => <option key={header} value={header}>{header}</option>)}
          </HTMLSelect>
          <HTMLSelect aria-label={`Row filter ${index + 1} operator`} value={draft.operator}
            onChange={(event) => update(index, { operator: event.target.value as RowFilter['operator'] })}>
            {(Object.keys(FILTER_OPERATOR_LABELS) as RowFilter['operator'][]).map((operator) => <option key={operator} value={operator}>{FILTER_OPERATOR_LABELS[operator]}</option>)}
          </HTMLSelect>
          <InputGroup aria-label={`Row filter ${index + 1} values`} placeholder="Calibrator, Control, Blank*" value={draft.values}
            onChange={(event) => update(index, { values: event.target.value })} />
          <Button variant="minimal" icon="cross" aria-label={`Remove row filter ${index + 1}`} onClick={() => onDrafts(drafts.filter((_, at) => at !== index))} />
        </div>
      ))}
      <div className="csv-row-filter">
        <Button size="small" icon="filter" text="Add row filter" disabled={drafts.length >= ROW_FILTER_LIMITS.filters || headers.length === 0}
          onClick={() => onDrafts([...drafts, { column: '', operator: 'equals', values: '' }])} />
        {drafts.length > 0 && (
          <span className="bp6-text-muted" data-testid="csv-row-filters-preview">
            {`${leftOut} of the first ${shown} rows are left out; the upload's result counts every row left out, by value.`}
          </span>
        )}
      </div>
    </div>
  );
}

/** Creates the missing instruments of the long-format series, one after the other (names are checked by the server). */
export function LongFormatPanel({
  headers, keyColumns, onKeyColumns, keys, picked, onPicked, series, equipmentId, busy, onCreated, partial, convertedUnit,
}: LongFormatPanelProps) {
  const missing = series.filter((entry) => entry.instrument === null);
  const firstColumn = missing[0]?.column ?? series[0]?.column ?? '';
  const catalogue = useInstrumentCatalogue();
  const suggestion = suggestInstrument(firstColumn, catalogue.data?.types ?? []);
  const [type, setType] = useState<string>(suggestion.type);
  const [unit, setUnit] = useState<string>(convertedUnit || suggestion.unit);
  const keyColumn = keyColumns.join(' x ');
  const [creating, setCreating] = useState(false);

  const createMissing = async () => {
    if (!equipmentId || !type) return;
    setCreating(true);
    const created: Instrument[] = [];
    try {
      for (const entry of missing) {
        created.push(await apiRequest<Instrument>('POST', '/api/v1/instruments', {
          name: entry.alias, type, equipment_id: equipmentId, unit: unit || null, alias: entry.alias,
        }, { schema: instrumentSchema }));
      }
      showToast({ title: CSV_TOAST_TITLES.instrumentCreated, message: `${created.length} instrument(s), one per ${keyColumn}`, intent: 'success' });
    } catch (cause) {
      console.error('Failed to create instruments', cause);
      showToast({ title: CSV_TOAST_TITLES.instrumentCreateFailed, message: cause instanceof Error ? cause.message : String(cause), intent: 'danger' });
    } finally {
      if (created.length > 0) onCreated(created);
      setCreating(false);
    }
  };

  const toggle = (key: string, on: boolean) => {
    const next = new Set(picked);
    if (on) next.add(key);
    else next.delete(key);
    onPicked(next);
  };

  return (
    <div className="csv-long" data-testid="csv-long-format">
      <KeyColumnsPicker headers={headers} keyColumns={keyColumns} onKeyColumns={onKeyColumns} />
      {keyColumns.length > 0 && (
        <>
          <div className="csv-long-keys">
            <span>{keys.length} key(s) in the first rows{partial ? ' (keys that appear only later in the file are skipped)' : ''}:</span>
            <Button size="small" variant="minimal" text="All" onClick={() => onPicked(new Set(keys))} />
            <Button size="small" variant="minimal" text="None" onClick={() => onPicked(new Set())} />
          </div>
          <div className="csv-long-key-list">
            {keys.map((key) => (
              <Checkbox key={key} inline checked={picked.has(key)} label={key} onChange={(event) => toggle(key, event.currentTarget.checked)} />
            ))}
          </div>
          <span className="bp6-text-muted">
            {series.length} instrument(s): each selected value column for each picked {keyColumn}, aliased like “{series[0]?.alias ?? `column (${keyColumn} key)`}”.
          </span>
          {missing.length > 0 && (
            <Callout intent={Intent.WARNING} icon="wrench" compact title={`${missing.length} instrument(s) to create`}>
              <div className="csv-long-create">
                <HTMLSelect aria-label="Type of the new instruments" value={type} onChange={(event) => setType(event.target.value)}>
                  <option value="" disabled>Type...</option>
                  {withCurrent(catalogueTypeNames({ types: catalogue.data?.types ?? [] }), type).map((option) => <option key={option} value={option}>{option}</option>)}
                </HTMLSelect>
                <HTMLSelect aria-label="Unit of the new instruments" value={unit} onChange={(event) => setUnit(event.target.value)}>
                  <option value="">No unit</option>
                  {withCurrent(catalogueUnitCodes({ units: catalogue.data?.units ?? [] }), unit).map((option) => <option key={option} value={option}>{unitOptionLabel(catalogue.data, option)}</option>)}
                </HTMLSelect>
                <Button intent={Intent.PRIMARY} icon="add" loading={creating} disabled={!equipmentId || !type || busy}
                  text={`Create ${missing.length} instrument(s)`} onClick={() => void createMissing()} />
              </div>
            </Callout>
          )}
        </>
      )}
    </div>
  );
}
