/**
 * Import report: an analyzer's report (CSV, TXT or an Excel workbook's sheet) into the unit
 * operation's samples. The file's detected layout is shown (the api's preview), the person picks the
 * sample ID and time columns, the layout and its analytes (units prefilled from the headers) and the
 * rows to leave out; Preview runs the import as a dry run and shows what it would do (samples
 * matched and created, results added and replaced, flags kept, IDs it could not match, rows it could
 * not read with why), and Import applies it.
 */
import { useState } from 'react';
import {
  Button, Callout, Checkbox, Dialog, DialogBody, DialogFooter, FileInput, FormGroup, HTMLSelect, HTMLTable, InputGroup, Radio, RadioGroup, Tag,
} from '@blueprintjs/core';
import { isSpreadsheetName } from '@bioprocess/shared/csv/index';
import { DEFAULT_EXCLUDED_WORDS, type SampleImportPreview } from '@bioprocess/shared/samples-import';
import { convertWorkbook } from '../csv-upload/spreadsheet-conversion.ts';
import { timeZoneName } from '../dates/date-time-format.ts';
import { importReport, previewReport } from './report-import-client.ts';
import {
  buildMapping, initialState, mappingProblem, readKeyValueView, reportColumns, reportRows, tableView, type ReportImportState, type ReportView,
} from './report-import-model.ts';

export const REPORT_IMPORT_MESSAGES = {
  title: 'Import report',
  fileHint: 'A metabolite analyzer, cell counter or HPLC report: CSV, TXT or an Excel workbook (.xlsx), one row per sample (wide) or per result (long), or one sample as key : value lines.',
  exclusionWords: `Leave out rows whose sample ID or sample type says ${DEFAULT_EXCLUDED_WORDS.join(', ')}`,
  drawnHint: 'When a drawn time is given, samples not yet in the grid are created; otherwise they are listed as not matched.',
  nothingToImport: 'Nothing to import: every result is already stored as the report writes it.',
} as const;

export interface ReportImportDialogProps {
  isOpen: boolean;
  unitOperationId: number;
  onClose: () => void;
  /** Called once the import is saved. */
  onImported: (result: SampleImportPreview) => Promise<unknown>;
}

interface ChosenFile {
  /** What is sent: the report, or the CSV text of the workbook's chosen sheet. */
  file: File;
  name: string;
  sheets: string[] | null;
  sheet: string | null;
}

function ColumnSelect({ id, value, columns, optional, onChange, testId }: {
  id: string; value: string; columns: string[]; optional?: string; onChange: (value: string) => void; testId?: string;
}) {
  return (
    <HTMLSelect id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)} data-testid={testId} fill>
      {optional !== undefined ? <option value="">{optional}</option> : null}
      {columns.map((column) => <option key={column} value={column}>{column}</option>)}
    </HTMLSelect>
  );
}

function countText(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

export function ReportImportDialog({ isOpen, unitOperationId, onClose, onImported }: ReportImportDialogProps) {
  const [chosen, setChosen] = useState<ChosenFile | null>(null);
  const [layout, setLayout] = useState<ReportView | null>(null);
  const [state, setState] = useState<ReportImportState | null>(null);
  const [preview, setPreview] = useState<SampleImportPreview | null>(null);
  const [busy, setBusy] = useState<'reading' | 'previewing' | 'importing' | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reset = () => {
    setChosen(null); setLayout(null); setState(null); setPreview(null); setError(null); setBusy(null);
  };
  const close = () => {
    reset();
    onClose();
  };

  const read = async (file: File, name: string, sheets: string[] | null, sheet: string | null, headerless: boolean) => {
    setBusy('reading');
    setError(null);
    setPreview(null);
    try {
      // One sample as key/value lines (Vi-CELL XR, NucleoView) is read here; a table by the api's preview.
      const keyValue = headerless || sheets ? null : readKeyValueView(new Uint8Array(await file.arrayBuffer()));
      const detected = keyValue ?? tableView(await previewReport(file, headerless));
      setChosen({ file, name, sheets, sheet });
      setLayout(detected);
      setState(initialState(detected, headerless));
    } catch (caught) {
      setLayout(null);
      setState(null);
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(null);
    }
  };

  const choose = async (file: File, sheet: string | null = null) => {
    if (!isSpreadsheetName(file.name)) return read(file, file.name, null, null, false);
    setBusy('reading');
    const converted = await convertWorkbook(file, sheet);
    if (!converted.ok) {
      setBusy(null);
      setError(converted.message);
      return undefined;
    }
    return read(converted.csv, file.name, converted.sheets, converted.sheet, false);
  };
  const [workbook, setWorkbook] = useState<File | null>(null);

  const update = (patch: Partial<ReportImportState>) => {
    setState((current) => (current ? { ...current, ...patch } : current));
    setPreview(null);
  };

  const run = async (dryRun: boolean) => {
    if (!chosen || !layout || !state) return;
    setBusy(dryRun ? 'previewing' : 'importing');
    setError(null);
    try {
      const answer = await importReport(unitOperationId, buildMapping(state, layout, timeZoneName()), chosen.file, dryRun);
      if (dryRun) {
        setPreview(answer);
        // A long report's analytes are known once read: their units can then be chosen.
        if (state.kind === 'long' && state.longAnalytes.length === 0) {
          setState({ ...state, longAnalytes: answer.analytes.map((entry) => ({ source: entry.source, analyte: entry.analyte, unit: entry.unit })) });
        }
      } else {
        await onImported(answer);
        close();
      }
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(null);
    }
  };

  const columns = layout && state ? reportColumns(layout, state.headerless) : [];
  const rows = layout && state ? reportRows(layout, state.headerless).slice(0, 5) : [];
  const problem = state ? mappingProblem(state) : null;
  const changes = preview ? preview.results_added + preview.results_replaced + preview.samples_to_create.length : 0;

  return (
    <Dialog isOpen={isOpen} onClose={close} title={REPORT_IMPORT_MESSAGES.title} icon="import" className="report-import-dialog" style={{ width: 880 }}>
      <DialogBody className="app-dialog-body report-import-body">
        <FormGroup label="Report" labelFor="report-file" helperText={REPORT_IMPORT_MESSAGES.fileHint}>
          <FileInput fill text={chosen ? chosen.name : 'Choose a report...'} hasSelection={chosen !== null} disabled={busy !== null}
            inputProps={{ id: 'report-file', accept: '.csv,.txt,.tsv,.asc,.xlsx', 'aria-label': 'Report file' } as React.InputHTMLAttributes<HTMLInputElement>}
            onInputChange={(event) => {
              const file = (event.target as HTMLInputElement).files?.[0];
              if (!file) return;
              setWorkbook(isSpreadsheetName(file.name) ? file : null);
              void choose(file);
            }} />
        </FormGroup>
        {chosen?.sheets && chosen.sheets.length > 1 && workbook ? (
          <FormGroup label="Sheet" labelFor="report-sheet" inline>
            <HTMLSelect id="report-sheet" value={chosen.sheet ?? ''} disabled={busy !== null}
              onChange={(event) => { void choose(workbook, event.currentTarget.value); }}>
              {chosen.sheets.map((sheet) => <option key={sheet} value={sheet}>{sheet}</option>)}
            </HTMLSelect>
          </FormGroup>
        ) : null}
        {busy === 'reading' ? <p className="bp6-text-muted">Reading the report...</p> : null}
        {error ? <Callout intent="danger" compact data-testid="report-import-error">{error}</Callout> : null}

        {layout && state ? (
          <>
            {layout.key_value ? (
              <p className="bp6-text-muted report-import-detected" data-testid="report-import-detected">
                Detected: a key/value report of one sample, '{layout.key_value.separator.trim() || layout.key_value.separator}' between key and value, {layout.encoding}, {countText(layout.headers.length, 'key', 'keys')}.
              </p>
            ) : (
              <>
                <p className="bp6-text-muted report-import-detected" data-testid="report-import-detected">
                  Detected: {layout.vendor ? `${layout.vendor}, ` : ''}{layout.delimiter === '\t' ? 'tab' : `'${layout.delimiter}'`}-separated, {layout.encoding}
                  {state.headerless ? ', no header row' : `, header on line ${layout.header_line}`}, {countText(layout.rows_parsed + (state.headerless ? 1 : 0), 'row', 'rows')}{layout.partial ? ' in the part read' : ''}.
                </p>
                <Checkbox checked={state.headerless} label="The report has no header row (columns are named Column 1, Column 2, ...)"
                  onChange={(event) => { void read(chosen!.file, chosen!.name, chosen!.sheets, chosen!.sheet, event.currentTarget.checked); }} />
              </>
            )}
            {state.refusal ? <Callout intent="danger" compact data-testid="report-import-refusal">{state.refusal}</Callout> : null}
            <div className="report-import-table">
              <HTMLTable compact striped>
                <thead><tr>{columns.map((column) => <th key={column}>{column}</th>)}</tr></thead>
                <tbody>{rows.map((row, index) => <tr key={index}>{columns.map((column, at) => <td key={column}>{row[at] ?? ''}</td>)}</tr>)}</tbody>
              </HTMLTable>
            </div>

            <div className="report-import-grid">
              <FormGroup label="Sample ID" labelFor="report-sample-id">
                <ColumnSelect id="report-sample-id" value={state.sampleIdColumn} columns={columns} onChange={(value) => update({ sampleIdColumn: value })} testId="report-sample-id" />
              </FormGroup>
              <FormGroup label="Drawn" labelFor="report-drawn" helperText={REPORT_IMPORT_MESSAGES.drawnHint}>
                <ColumnSelect id="report-drawn" value={state.drawnAtColumn} columns={columns} optional="(from the grid)" onChange={(value) => update({ drawnAtColumn: value })} />
              </FormGroup>
              <FormGroup label="Measured" labelFor="report-measured" helperText={`Times without a zone are read in ${timeZoneName()}.`}>
                <ColumnSelect id="report-measured" value={state.measuredAtColumn} columns={columns} optional="(none)" onChange={(value) => update({ measuredAtColumn: value })} />
              </FormGroup>
              <FormGroup label="Limit of flagged results" labelFor="report-limit" helperText="For LOQ or Below range written without a number.">
                <ColumnSelect id="report-limit" value={state.limitColumn} columns={columns} optional="(none)" onChange={(value) => update({ limitColumn: value })} />
              </FormGroup>
              <FormGroup label="Method" labelFor="report-method" helperText="The analyzer or assay, stored with each result.">
                <InputGroup id="report-method" value={state.method} placeholder="e.g. Cedex Bio HT" onChange={(event) => update({ method: event.target.value })} />
              </FormGroup>
            </div>

            {/* A key/value report is one sample: its keys are the analytes, there is no row per result. */}
            {state.keyValue ? null : (
              <RadioGroup inline label="Layout" selectedValue={state.kind} onChange={(event) => update({ kind: event.currentTarget.value as 'wide' | 'long' })}>
                <Radio value="wide" label="Wide: a column per analyte" />
                <Radio value="long" label="Long: a row per result (analyte, value, unit columns)" />
              </RadioGroup>
            )}
            {state.kind === 'wide' ? (
              <div className="report-import-analytes" data-testid="report-import-analytes">
                {state.wide.length === 0 ? <p className="bp6-text-muted">No numeric columns found.</p> : null}
                {state.wide.map((entry, index) => (
                  <div key={entry.column} className="report-import-analyte">
                    <Checkbox checked={entry.include} label={entry.column} aria-label={`Import ${entry.column}`}
                      onChange={(event) => update({ wide: state.wide.map((item, at) => (at === index ? { ...item, include: event.currentTarget.checked } : item)) })} />
                    <InputGroup size="small" value={entry.analyte} aria-label={`Analyte of ${entry.column}`} disabled={!entry.include}
                      onChange={(event) => update({ wide: state.wide.map((item, at) => (at === index ? { ...item, analyte: event.target.value } : item)) })} />
                    <InputGroup size="small" value={entry.unit} placeholder="UCUM unit" aria-label={`Unit of ${entry.column}`} disabled={!entry.include}
                      intent={entry.include && !entry.unit.trim() ? 'danger' : 'none'}
                      onChange={(event) => update({ wide: state.wide.map((item, at) => (at === index ? { ...item, unit: event.target.value } : item)) })} />
                  </div>
                ))}
              </div>
            ) : (
              <div className="report-import-grid">
                <FormGroup label="Analyte" labelFor="report-analyte">
                  <ColumnSelect id="report-analyte" value={state.analyteColumn} columns={columns} optional="(choose)" onChange={(value) => update({ analyteColumn: value, longAnalytes: [] })} />
                </FormGroup>
                <FormGroup label="Value" labelFor="report-value">
                  <ColumnSelect id="report-value" value={state.valueColumn} columns={columns} optional="(choose)" onChange={(value) => update({ valueColumn: value })} />
                </FormGroup>
                <FormGroup label="Unit" labelFor="report-unit">
                  <ColumnSelect id="report-unit" value={state.unitColumn} columns={columns} optional="(none)" onChange={(value) => update({ unitColumn: value, longAnalytes: [] })} />
                </FormGroup>
              </div>
            )}
            {state.kind === 'long' && state.longAnalytes.length > 0 ? (
              <div className="report-import-analytes" data-testid="report-import-long-analytes">
                <p className="bp6-text-muted">The report's analytes: name them and give each a UCUM unit.</p>
                {state.longAnalytes.map((entry, index) => (
                  <div key={entry.source} className="report-import-analyte">
                    <span className="report-import-source">{entry.source}</span>
                    <InputGroup size="small" value={entry.analyte} aria-label={`Analyte of ${entry.source}`}
                      onChange={(event) => update({ longAnalytes: state.longAnalytes.map((item, at) => (at === index ? { ...item, analyte: event.target.value } : item)) })} />
                    <InputGroup size="small" value={entry.unit} placeholder="UCUM unit" aria-label={`Unit of ${entry.source}`}
                      onChange={(event) => update({ longAnalytes: state.longAnalytes.map((item, at) => (at === index ? { ...item, unit: event.target.value } : item)) })} />
                  </div>
                ))}
              </div>
            ) : null}

            <RadioGroup label="Calibrators, controls and blanks" selectedValue={state.exclusion}
              onChange={(event) => update({ exclusion: event.currentTarget.value as 'words' | 'keep' })}>
              <Radio value="words" label={REPORT_IMPORT_MESSAGES.exclusionWords} />
              <Radio value="keep" label="Keep only rows whose sample-type column is one of:" />
            </RadioGroup>
            {state.exclusion === 'keep' ? (
              <div className="report-import-grid">
                <ColumnSelect id="report-exclusion-column" value={state.exclusionColumn} columns={columns} optional="(choose the column)" onChange={(value) => update({ exclusionColumn: value })} />
                <InputGroup value={state.keepValues} placeholder="e.g. SAM, Sample" aria-label="Values to keep" onChange={(event) => update({ keepValues: event.target.value })} />
              </div>
            ) : null}
            {problem && problem !== state.refusal ? <Callout compact intent="warning">{problem}</Callout> : null}
          </>
        ) : null}

        {preview ? <ImportPreview preview={preview} /> : null}
      </DialogBody>
      <DialogFooter actions={(
        <>
          <Button text="Cancel" onClick={close} disabled={busy === 'importing'} />
          <Button text="Preview" icon="eye-open" disabled={!state || problem !== null || busy !== null} loading={busy === 'previewing'}
            onClick={() => { void run(true); }} data-testid="report-import-preview" />
          <Button text="Import" icon="import" intent="primary" disabled={!preview || changes === 0 || busy !== null} loading={busy === 'importing'}
            onClick={() => { void run(false); }} data-testid="report-import-submit" />
        </>
      )} />
    </Dialog>
  );
}

function ImportPreview({ preview }: { preview: SampleImportPreview }) {
  const changes = preview.results_added + preview.results_replaced + preview.samples_to_create.length;
  return (
    <div className="report-import-preview" data-testid="report-import-summary">
      <HTMLTable compact>
        <tbody>
          <tr><th>Samples matched</th><td data-testid="report-import-matched">{preview.samples_matched.length}</td></tr>
          <tr><th>Samples to create</th><td>{preview.samples_to_create.length}</td></tr>
          <tr><th>Results to add</th><td data-testid="report-import-added">{preview.results_added}</td></tr>
          <tr><th>Results to replace</th><td>{preview.results_replaced}</td></tr>
          <tr><th>Results already stored</th><td>{preview.results_unchanged}</td></tr>
          <tr><th>Flags kept</th><td data-testid="report-import-flags">{preview.flags_kept}</td></tr>
          <tr><th>Rows left out</th><td>{preview.rows_excluded}</td></tr>
          {preview.results_superseded > 0 ? <tr><th>Earlier measurements replaced by a later one</th><td>{preview.results_superseded}</td></tr> : null}
        </tbody>
      </HTMLTable>
      {changes === 0 ? <Callout compact>{REPORT_IMPORT_MESSAGES.nothingToImport}</Callout> : null}
      {preview.unmatched_sample_ids.length > 0 ? (
        <Callout compact intent="warning" title={`${countText(preview.unmatched_sample_ids.length, 'sample ID', 'sample IDs')} not in this unit operation`} data-testid="report-import-unmatched">
          <div className="report-import-tags">
            {preview.unmatched_sample_ids.map((entry) => <Tag key={entry.sample_id} minimal>{entry.sample_id}</Tag>)}
          </div>
        </Callout>
      ) : null}
      {preview.rows_unreadable > 0 ? (
        <Callout compact intent="danger" title={`${countText(preview.rows_unreadable, 'value', 'values')} could not be read`} data-testid="report-import-unreadable">
          <HTMLTable compact>
            <thead><tr><th>Line</th><th>Sample ID</th><th>Why</th></tr></thead>
            <tbody>
              {preview.unreadable.map((entry, index) => (
                <tr key={index}><td>{entry.line}</td><td>{entry.sample_id ?? ''}</td><td>{entry.reason}</td></tr>
              ))}
            </tbody>
          </HTMLTable>
          {preview.rows_unreadable > preview.unreadable.length ? <p>and {preview.rows_unreadable - preview.unreadable.length} more.</p> : null}
        </Callout>
      ) : null}
    </div>
  );
}
