/**
 * The CSV part of the unit-operation dialog: choose a file, see 10 preview rows
 * read from the first part of the file, select and assign columns, create missing instruments in the
 * wizard, pick how the timestamp column reads (dates, or elapsed time since the operation's start),
 * then, once the dialog has saved the unit operation, upload the file to the server and follow the
 * ingest job with a progress bar. The browser never parses more than the preview.
 *
 * Plugs into UnitOperationDialog through its `csvSection` slot and submit hook.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  Button, Callout, Checkbox, FileInput, FormGroup, HTMLSelect, Intent, ProgressBar, Radio, RadioGroup, Tag,
} from '@blueprintjs/core';
import {
  CSV_MESSAGES, CSV_TOAST_TITLES, SPREADSHEET_MIME_TYPE, TURN_TABLE_MAX_BYTES, decodeCsvBytes, turnTable, decimalCommaAllowed, detectTimestampFormat, distinctRowKeys, findNonNumericValues, isLowConfidence, isSpreadsheetName,
  keyColumnsOf, leavesOut, localePrefersDayFirst, longFormatAlias as longFormatAliasOf, lowDateConfidenceMessage, nonNumericMessage, type CsvPreview,
  type CsvLayout, type CsvReadingChoices, type FileTimeBase, type RowFilter, type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import { ELAPSED_UNITS, type CsvMapping, type CsvReading, type ElapsedUnit } from '@bioprocess/shared/timeseries';
import { DEFAULT_ORGANIZATION_TIME_ZONE } from '@bioprocess/shared/organization-settings';
import { useOrganizationSettings } from '../settings/use-organization-settings.ts';
import { useApi } from '../api/hooks.ts';
import { showToast } from '../components/toaster.ts';
import { formatDate } from '../entities/format.ts';
import { instrumentListSchema, type Instrument } from '../entities/types.ts';
import type { UnitOperationDialogContext, UnitOperationFormState } from '../runs/UnitOperationDialog.tsx';
import {
  assignColumn, blockedSubmitLabel, buildMapping, carryByPosition, firstConversionProblem, guessTimestampColumn, initialColumns, newInstrumentColumns,
  reconcileWithInstruments, type ColumnConversion, type ColumnState, type TimestampMode,
} from './column-mapping.ts';
import { readCsvPreview } from './read-preview.ts';
import { convertWorkbook } from './spreadsheet-conversion.ts';
import { postCsvUpload, postUnitOperationWithCsv, type ReadingChoices } from './upload-client.ts';
import type { DuplicatePolicy } from '@bioprocess/shared/ingest/requests';
import { useUploadJob, type SendUpload } from './use-upload-job.ts';
import { ColumnMappingTable, PREVIEW_TABLE_ROWS } from './ColumnMappingTable.tsx';
import { InstrumentWizard } from './InstrumentWizard.tsx';
import { ExistingDataPreview } from './ExistingDataPreview.tsx';
import { describeProgress, type UploadState } from './upload-progress.ts';
import { ReplaceOption } from '../runs/ReplaceOption.tsx';
import type { UnitOperationCreateBody } from '../runs/UnitOperationDialog.tsx';
import { unitOperationSchema, type UnitOperation } from '../entities/types.ts';
import { toCamelCase } from '../api/case.ts';
import {
  buildLongFormatMapping, chooseZone, draftOf, longFormatSeries, parseMissingValues, previewDuplicates, previewLeftOut, previewTimestamps, recallFillForward,
  rememberFillForward, rowFiltersOf, type RowFilterDraft,
} from './reading-options.ts';
import { LongFormatPanel, RowChoices, RowFiltersPanel, TimeZonePanel } from './ReadingOptions.tsx';
import { isOpenEnded, OpenEndChoice } from '../unit-operations/OpenEndChoice.tsx';
import { useWindowCheck, WindowCheckNotice, WINDOW_CHECK_MESSAGES } from './WindowCheckStep.tsx';
import { ElapsedStartField, FileLayoutPanel } from './FileLayoutPanel.tsx';
import { readingOf, startInstant } from './file-layout.ts';
import './csv-upload.css';

export function CsvUploadSection({ context }: { context: UnitOperationDialogContext }) {
  const { state, setSubmitHook } = context;
  const [file, setFile] = useState<File | null>(null);
  /** The Excel workbook chosen, when the file is one of its sheets converted to CSV text. */
  const [workbook, setWorkbook] = useState<{ source: File; sheets: string[]; sheet: string } | null>(null);
  const [preview, setPreview] = useState<CsvPreview | null>(null);
  const [layout, setLayout] = useState<CsvLayout | null>(null);
  /** Wall-clock start elapsed time counts from: the preamble's, or typed; empty: the unit operation's start. */
  const [elapsedStart, setElapsedStart] = useState('');
  const [partial, setPartial] = useState(false);
  const [encoding, setEncoding] = useState('utf-8');
  const [columns, setColumns] = useState<ColumnState[] | null>(null);
  const [timestampMode, setTimestampMode] = useState<TimestampMode>('absolute');
  const [elapsedUnit, setElapsedUnit] = useState<ElapsedUnit>('seconds');
  const [replaceExisting, setReplaceExisting] = useState(false);
  const [closeOpenEnd, setCloseOpenEnd] = useState(true);
  const openEnded = isOpenEnded(state);
  const [sampleRows, setSampleRows] = useState<string[][]>([]);
  const [timeBase, setTimeBase] = useState<FileTimeBase | null>(null);
  /** The zone picked in the wizard; null until the user picks one (the organisation's zone applies). */
  const [pickedZone, setPickedZone] = useState<string | null>(null);
  const [fillForward, setFillForward] = useState<Set<string>>(new Set());
  const [longFormat, setLongFormat] = useState(false);
  const [keyColumns, setKeyColumns] = useState<string[]>([]);
  const [rowFilterDrafts, setRowFilterDrafts] = useState<RowFilterDraft[]>([]);
  const [conversions, setConversions] = useState<Map<string, ColumnConversion>>(new Map());
  const [pickedKeys, setPickedKeys] = useState<Set<string>>(new Set());
  const [duplicates, setDuplicates] = useState<DuplicatePolicy>('refuse');
  const [missingValues, setMissingValues] = useState('');
  const [wizardOpen, setWizardOpen] = useState(false);
  const { upload, run: runUpload, clear: clearUpload } = useUploadJob();
  const [reading, setReading] = useState(false);
  const inputRef = useRef<HTMLInputElement | null>(null);

  const instruments = useApi<Instrument[]>(state.equipmentId ? `/api/v1/equipment/${state.equipmentId}/instruments` : null, instrumentListSchema);
  const instrumentList = useMemo(() => instruments.data ?? [], [instruments.data]);
  const organizationSettings = useOrganizationSettings();
  const organizationZone = organizationSettings.data?.timeZone ?? DEFAULT_ORGANIZATION_TIME_ZONE;
  const chosenZone = pickedZone ?? organizationZone;
  const preferDayFirst = useMemo(() => localePrefersDayFirst(navigator.language || 'en-US'), []);

  // Assignments follow the equipment: instruments of another equipment are dropped, matching ones found.
  useEffect(() => {
    setColumns((current) => (current ? reconcileWithInstruments(current, instrumentList) : current));
  }, [instrumentList]);

  const timestampColumn = columns?.find((c) => c.selected && c.assignment.kind === 'timestamp') ?? null;
  const timestampValues = useMemo(() => {
    if (!preview || !timestampColumn) return [];
    const index = preview.headers.indexOf(timestampColumn.name);
    return preview.rows.map((row) => row[index] ?? '');
  }, [preview, timestampColumn]);
  const detection = useMemo<TimestampDetection | null>(() => {
    if (!timestampColumn || timestampValues.length === 0) return null;
    return detectTimestampFormat(timestampValues, { preferDayFirst, columnName: timestampColumn.name });
  }, [timestampValues, timestampColumn, preferDayFirst]);
  const zoneChoice = useMemo(() => chooseZone({ timeBase, samples: timestampValues, chosen: chosenZone, organizationZone }),
    [timeBase, timestampValues, chosenZone, organizationZone]);
  const timestampPreview = useMemo(() => previewTimestamps(timestampValues, detection, zoneChoice.zone), [timestampValues, detection, zoneChoice.zone]);
  const elapsedStartIso = timestampMode === 'elapsed' && elapsedStart.trim() !== '' ? startInstant(elapsedStart, zoneChoice.zone) : null;
  // Before anything is mapped: the file's first and last reading read as the preview reads them, checked against the equipment.
  const windowCheck = useWindowCheck({
    file, headRows: sampleRows, partial, encoding, form: state, closeOpenEnd: !openEnded || closeOpenEnd,
    reading: preview && {
      columnIndex: timestampColumn ? preview.headers.indexOf(timestampColumn.name) : -1, delimiter: preview.delimiter, mode: timestampMode,
      detection, zone: zoneChoice.zone, elapsedUnit, startMs: elapsedStartIso ? Date.parse(elapsedStartIso) : state.startTime ? Date.parse(state.startTime) : null,
    },
  });

  // Long format: the value columns are the selected ones other than the timestamp and the keys.
  const rowFilters = useMemo(() => rowFiltersOf(rowFilterDrafts), [rowFilterDrafts]);
  const keptRows = useMemo(() => (preview ? keptByFilters(preview.headers, sampleRows, rowFilters) : sampleRows), [preview, sampleRows, rowFilters]);
  const keyIndexes = useMemo(() => (longFormat && preview ? keyColumns.map((column) => preview.headers.indexOf(column)).filter((index) => index !== -1) : []),
    [longFormat, preview, keyColumns]);
  const keys = useMemo(() => (keyIndexes.length === 0 ? [] : distinctRowKeys(keptRows, keyIndexes)), [keptRows, keyIndexes]);
  const valueColumns = useMemo(() => (columns ?? [])
    .filter((c) => c.selected && c.assignment.kind !== 'timestamp' && !keyColumns.includes(c.name))
    .map((c) => c.name), [columns, keyColumns]);
  const shownDuplicates = useMemo(() => previewDuplicates(
    keptRows, preview && timestampColumn ? preview.headers.indexOf(timestampColumn.name) : -1, keyIndexes,
  ), [keptRows, preview, timestampColumn, keyIndexes]);
  const series = useMemo(() => (longFormat && keyColumns.length > 0
    ? longFormatSeries(valueColumns, keyColumns, keys.filter((key) => pickedKeys.has(key)), instrumentList)
    : []), [longFormat, keyColumns, valueColumns, keys, pickedKeys, instrumentList]);
  // A new key column starts with every key picked.
  useEffect(() => setPickedKeys(new Set(keys)), [keys]);

  // A numeric column that looks like elapsed time starts in elapsed mode with the suggested unit.
  useEffect(() => {
    if (!detection) return;
    if (detection.elapsed) {
      setTimestampMode('elapsed');
      setElapsedUnit(detection.elapsed.unit);
    } else {
      setTimestampMode('absolute');
    }
  }, [detection]);

  const clearFile = useCallback(() => {
    setFile(null);
    setWorkbook(null);
    setPreview(null);
    setLayout(null);
    setElapsedStart('');
    setColumns(null);
    clearUpload();
    setSampleRows([]);
    setTimeBase(null);
    setLongFormat(false);
    setKeyColumns([]);
    setRowFilterDrafts([]);
    setConversions(new Map());
    if (inputRef.current) inputRef.current.value = '';
  }, [clearUpload]);

  /**
   * Reads the preview of a file; `choices` are the user's changes to the detected layout (encoding,
   * delimiter, header line, no header row and its column names). A first row that reads as data is
   * read again without a header row unless the user said otherwise. `renamed`: the same table read
   * again under new column names, whose choices follow the names.
   */
  const chooseFile = async (chosen: File | null, choices: CsvReadingChoices = {}, renamed?: { columns: ColumnState[]; names: Map<string, string> }): Promise<boolean> => {
    if (!chosen) {
      clearFile();
      return false;
    }
    setReading(true);
    try {
      let outcome = await readCsvPreview(chosen, undefined, { ...choices, preferDayFirst });
      if (outcome.ok && choices.no_header === undefined && outcome.layout.looks_headerless && outcome.layout.header_row !== false) {
        const headerLine = choices.header_line ?? (outcome.layout.separator_hint ? 2 : 1);
        const headerless = await readCsvPreview(chosen, undefined, { ...choices, preferDayFirst, no_header: true, header_line: headerLine });
        if (headerless.ok) outcome = headerless;
      }
      if (!outcome.ok) {
        showToast({ title: outcome.title, message: outcome.message, intent: 'danger' });
        clearFile();
        return false;
      }
      setFile(chosen);
      setPreview(outcome.preview);
      setLayout(outcome.layout);
      setElapsedStart(outcome.layout.start?.wallClock ?? '');
      setPartial(outcome.partial);
      setEncoding(outcome.encoding);
      setSampleRows(outcome.sampleRows);
      setTimeBase(outcome.timeBase);
      clearUpload();
      if (renamed) {
        const rename = (name: string) => renamed.names.get(name) ?? name;
        setColumns(carryByPosition(renamed.columns, outcome.preview.headers));
        setKeyColumns((current) => current.map(rename));
        setFillForward((current) => new Set([...current].map(rename)));
        setConversions((current) => new Map([...current].map(([column, conversion]) => [rename(column), conversion])));
        setRowFilterDrafts((current) => current.map((draft) => ({ ...draft, column: rename(draft.column) })));
        return true;
      }
      setFillForward(new Set(outcome.preview.headers.filter((header) => recallFillForward([header]))));
      setConversions(new Map());
      // What the detection suggests: rows left out (calibrators, blanks) and long format by its key columns.
      setRowFilterDrafts((outcome.layout.row_filters ?? []).map(draftOf));
      const suggestedLong = outcome.layout.long_format ?? null;
      setLongFormat(suggestedLong !== null);
      setKeyColumns(suggestedLong?.key_columns ?? []);
      const detectedTime = outcome.layout.time_column === null ? -1 : outcome.preview.headers.indexOf(outcome.layout.time_column);
      const timestampIndex = detectedTime !== -1 ? detectedTime : guessTimestampColumn(outcome.preview.headers, outcome.preview.rows, preferDayFirst);
      const initial = initialColumns(outcome.preview.headers, timestampIndex, instrumentList);
      setColumns(suggestedLong
        ? initial.map((column) => (suggestedLong.value_columns.includes(column.name) && !column.selected ? { ...column, selected: true, assignment: { kind: 'new' } } : column))
        : initial);
      return true;
    } finally {
      setReading(false);
    }
  };

  /** A file picked in the file field: a workbook is read one sheet at a time, anything else as a text export. */
  const chooseNewFile = async (chosen: File | null) => {
    setWorkbook(null);
    if (chosen && isSpreadsheetName(chosen.name)) await chooseWorkbookSheet(chosen, null);
    else await chooseFile(chosen);
  };

  /** Reads one sheet of a workbook as CSV text (the api converts it), then previews that text as a chosen text export. */
  async function chooseWorkbookSheet(source: File, sheet: string | null) {
    setReading(true);
    try {
      const converted = await convertWorkbook(source, sheet);
      if (!converted.ok) {
        showToast({ title: converted.title, message: converted.message, intent: 'danger' });
        clearFile();
        return;
      }
      // A sheet without a table (a workbook's info sheet) still leaves the choice of another sheet.
      const previewed = await chooseFile(converted.csv);
      if (previewed || converted.sheets.length > 1) setWorkbook({ source, sheets: converted.sheets, sheet: converted.sheet });
    } finally {
      setReading(false);
    }
  }

  /** Turns a transposed table (time across the columns) so time runs down the rows, and reads the turned text as the file. */
  async function turnChosenTable() {
    if (!file || !layout) return;
    if (file.size > TURN_TABLE_MAX_BYTES) {
      showToast({ title: CSV_TOAST_TITLES.invalidFile, message: `Only tables up to ${formatBytes(TURN_TABLE_MAX_BYTES)} can be turned; this file is ${formatBytes(file.size)}.`, intent: 'danger' });
      return;
    }
    setReading(true);
    try {
      const { text } = decodeCsvBytes(new Uint8Array(await file.arrayBuffer()), { encoding: layout.encoding });
      const turned = turnTable(text, layout);
      await chooseFile(new File([turned], file.name.replace(/(\.[^.]*)?$/, ' (turned).csv'), { type: 'text/csv' }));
    } finally {
      setReading(false);
    }
  }

  /** A header-less file's columns renamed: the preview is read again under the new names, each column keeping its choices. */
  const renameColumn = (index: number, name: string) => {
    if (!file || !layout || !preview || !columns) return;
    const names = [...preview.headers];
    const taken = names.some((existing, at) => at !== index && existing.trim().toLowerCase() === name.trim().toLowerCase());
    if (taken) {
      showToast({ title: CSV_TOAST_TITLES.validationError, message: `Another column is already named '${name}'.`, intent: 'danger' });
      return;
    }
    const before = names[index]!;
    names[index] = name;
    void chooseFile(file, {
      encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, no_header: true, column_names: names,
    }, { columns, names: new Map([[before, name]]) });
  };
  /** The user says whether the file has a header row: read again with or without one. */
  const chooseHeaderRow = (hasHeader: boolean) => {
    if (!file || !layout) return;
    void chooseFile(file, hasHeader
      ? { encoding: layout.encoding, delimiter: layout.delimiter, no_header: false }
      : { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.separator_hint ? 2 : 1, no_header: true });
  };
  const headerless = layout?.header_row === false;

  // The submit hook reads the latest state through a ref, so it is registered again only when the label changes.
  const timeZone = zoneChoice.zone;
  const choices: ReadingChoices = { duplicates, missingValues: parseMissingValues(missingValues) };
  const fileReading = layout ? { ...readingOf(layout), ...(headerless && preview ? { column_names: [...preview.headers] } : {}) } : null;
  const mappingState = {
    file, preview, columns, timestampMode, elapsedUnit, replaceExisting, timeZone, fillForward, longFormat, keyColumns, series, rowFilters, conversions,
    closeOpenEnd: openEnded && closeOpenEnd, fileReading, elapsedStart: elapsedStartIso,
  };
  const latest = useRef({ choices, ...mappingState });
  latest.current = { choices, ...mappingState };
  const blockedLabel = !file ? null
    : windowCheck.refused ? WINDOW_CHECK_MESSAGES.blockedLabel
    : longFormat ? (series.length === 0 || series.some((entry) => entry.instrument === null) ? CSV_MESSAGES.completeInstrumentSetupFirst : null)
      : blockedSubmitLabel(columns);

  const beforeSave = useCallback((form: UnitOperationFormState): boolean => {
    const current = latest.current;
    if (!current.file || !current.columns || !current.preview) return true;
    const result = mappingOf(current);
    if (!result.ok) {
      showToast({ title: result.title, message: result.message, intent: 'danger' });
      return false;
    }
    if (result.mapping.timestamp_mode === 'elapsed' && !form.startTime && result.mapping.elapsed_start === undefined) {
      showToast({ title: CSV_TOAST_TITLES.validationError, message: ELAPSED_NEEDS_START, intent: 'danger' });
      return false;
    }
    // The preview rows are checked here as a courtesy (those the row filters keep); the server checks every row of the file.
    const headers = current.preview.headers;
    const checkedRows = keptByFilters(headers, current.preview.rows, current.rowFilters);
    const nonNumeric = findNonNumericValues(result.mapping.columns.map(({ column }) => {
      const index = headers.indexOf(column);
      return { name: column, values: checkedRows.map((row) => row[index] ?? '') };
    }), { decimalComma: decimalCommaAllowed(current.preview.delimiter) });
    const message = nonNumericMessage(nonNumeric);
    if (message) {
      showToast({ title: CSV_TOAST_TITLES.csvValidationError, message, intent: 'danger' });
      return false;
    }
    return true;
  }, []);

  /**
   * Sends the file with the section's mapping (`send` posts it and answers the ingest job) and follows
   * the job to its end. Throws after showing the error when the upload fails, so the dialog keeps the user with it.
   */
  const followUpload = useCallback(async (send: SendUpload) => {
    const current = latest.current;
    if (!current.file || !current.columns) return;
    const result = mappingOf(current);
    if (!result.ok) return;
    rememberFillForwardOf(result.mapping);
    await runUpload(current.file, result.mapping, send);
  }, [runUpload]);

  const afterSave = useCallback(async (saved: { id: number }) => {
    await followUpload((chosen, mapping, onProgress) => postCsvUpload(saved.id, chosen, mapping, onProgress, undefined, latest.current.choices));
  }, [followUpload]);

  const createWith = useCallback(async (body: UnitOperationCreateBody): Promise<UnitOperation> => {
    let created: unknown = null;
    await followUpload(async (chosen, mapping, onProgress) => {
      const answer = await postUnitOperationWithCsv({ ...body }, chosen, mapping, onProgress, undefined, latest.current.choices);
      created = answer.unitOperation;
      return answer.jobId;
    });
    return toCamelCase(unitOperationSchema.parse(created)) as UnitOperation;
  }, [followUpload]);

  useEffect(() => {
    setSubmitHook(file ? { blockedLabel, beforeSave, afterSave, createWith } : null);
  }, [file, blockedLabel, beforeSave, afterSave, createWith, setSubmitHook]);
  useEffect(() => () => setSubmitHook(null), [setSubmitHook]);

  const wizardColumns = columns ? newInstrumentColumns(columns).map((c) => c.name) : [];
  const selectedCount = columns?.filter((c) => c.selected).length ?? 0;
  const existingData = state.mode === 'edit' && state.unitOperation ? <ExistingDataPreview unitOperationId={state.unitOperation.id} instruments={instrumentList} /> : null;

  return (
    <section className="csv-section" data-testid="csv-upload-section">
      <div className="csv-section-title">
        <h4>Instrument data (CSV)</h4>
        <span className="bp6-text-muted">Optional. The file is checked here from its first rows and read in full by the server.</span>
      </div>
      {existingData}
      <FormGroup label="CSV file" labelFor="csv-file" labelInfo="(optional)">
        <div className="csv-file-row">
          <FileInput fill text={file ? file.name : 'Choose a CSV file...'} hasSelection={file !== null} disabled={context.busy || reading}
            inputProps={{ id: 'csv-file', accept: `.csv,.txt,.tsv,.asc,.xlsx,text/csv,text/plain,text/tab-separated-values,${SPREADSHEET_MIME_TYPE}`, ref: inputRef, 'aria-label': 'CSV file' }}
            onInputChange={(event) => void chooseNewFile(event.currentTarget.files?.[0] ?? null)} />
          {file && <Button variant="minimal" icon="cross" aria-label="Remove file" onClick={clearFile} disabled={context.busy} />}
        </div>
      </FormGroup>
      {workbook && (
        <FormGroup label="Sheet" labelFor="csv-sheet" helperText={`${workbook.source.name}: ${workbook.sheets.length} sheet(s), read as CSV text.`}>
          <HTMLSelect id="csv-sheet" value={workbook.sheet} disabled={context.busy || reading || workbook.sheets.length < 2}
            onChange={(event) => void chooseWorkbookSheet(workbook.source, event.currentTarget.value)}>
            {workbook.sheets.map((sheet) => <option key={sheet} value={sheet}>{sheet}</option>)}
          </HTMLSelect>
        </FormGroup>
      )}

      <WindowCheckNotice state={windowCheck} fileChosen={file !== null && preview !== null} />
      {file && preview && columns && !windowCheck.refused && (
        <>
          <div className="csv-preview-meta">
            <Tag minimal>{formatBytes(file.size)}</Tag>
            <Tag minimal>delimiter {preview.delimiter === '\t' ? 'tab' : `“${preview.delimiter}”`}</Tag>
            {preview.section && <Tag minimal>section {preview.section}</Tag>}
            <Tag minimal>{columns.length} columns</Tag>
            <Tag minimal intent={selectedCount ? 'primary' : 'none'}>{selectedCount} selected</Tag>
            <span className="bp6-text-muted">
              Preview of the first {Math.min(PREVIEW_TABLE_ROWS, preview.rows.length)} rows{partial ? ' (read from the start of the file)' : ''}.
            </span>
          </div>
          {layout && <FileLayoutPanel layout={layout} busy={context.busy || reading} onChoose={(choices) => void chooseFile(file, choices)} onTurn={() => void turnChosenTable()} />}
          <Checkbox checked={headerless} disabled={context.busy || reading} onChange={(event) => chooseHeaderRow(!event.currentTarget.checked)}
            data-testid="csv-no-header" label="The file has no header row (columns are named Column 1, Column 2, ...; rename them in their headers)" />
          <ColumnMappingTable columns={columns} rows={preview.rows} instruments={instrumentList} keyColumns={longFormat ? keyColumns : []}
            fillForward={fillForward} conversions={conversions}
            onConversionChange={(column, conversion) => setConversions((current) => {
              const next = new Map(current);
              if (conversion) next.set(column, conversion);
              else next.delete(column);
              return next;
            })}
            onRename={headerless ? renameColumn : undefined}
            onColumnsChange={(update) => setColumns((cols) => cols && update(cols))}
            onFillForwardChange={(column, fill) => setFillForward((current) => {
              const next = new Set(current);
              if (fill) next.add(column);
              else next.delete(column);
              return next;
            })} />

          {!longFormat && wizardColumns.length > 0 && (
            <div ref={scrollIntoViewOnMount}>
            <Callout intent={Intent.WARNING} icon="wrench" className="csv-callout" title={`${wizardColumns.length} column(s) need a new instrument`}>
              <p>{wizardColumns.join(', ')}</p>
              <Button intent={Intent.PRIMARY} icon="add" text="Set up instruments" disabled={!state.equipmentId || context.busy}
                onClick={() => setWizardOpen(true)} />
              {!state.equipmentId && <span className="csv-hint">Choose the equipment first: instruments belong to it.</span>}
            </Callout>
            </div>
          )}

          {timestampColumn ? (
            <div className="csv-timestamp">
              <RadioGroup inline label={`Timestamp column “${timestampColumn.name}” holds`} selectedValue={timestampMode}
                onChange={(event) => setTimestampMode(event.currentTarget.value as TimestampMode)}>
                <Radio value="absolute" label="Dates and times" />
                <Radio value="elapsed" label="Elapsed time since the unit operation's start" />
              </RadioGroup>
              {timestampMode === 'elapsed' && (
                <div className="csv-elapsed">
                  <FormGroup label="Unit" labelFor="csv-elapsed-unit" inline>
                    <HTMLSelect id="csv-elapsed-unit" value={elapsedUnit} onChange={(event) => setElapsedUnit(event.target.value as ElapsedUnit)}>
                      {ELAPSED_UNITS.map((unit) => <option key={unit} value={unit}>{unit}</option>)}
                    </HTMLSelect>
                  </FormGroup>
                  <ElapsedStartField value={elapsedStart} onChange={setElapsedStart} zone={zoneChoice.zone} plateGrid={layout?.grid != null}
                    fromFile={layout?.start && layout.start.wallClock === elapsedStart ? layout.start : null} />
                  {elapsedStartIso
                    ? <span className="bp6-text-muted" data-testid="csv-elapsed-zero">0 {elapsedUnit} = {formatDate(elapsedStartIso)}</span>
                    : elapsedStart.trim() !== ''
                      ? <Callout intent={Intent.WARNING} compact>The start does not read: write it as 2023-09-15T12:30:01.</Callout>
                      : state.startTime
                        ? <span className="bp6-text-muted">0 {elapsedUnit} = {formatDate(state.startTime)}</span>
                        : <Callout intent={Intent.WARNING} compact>{ELAPSED_NEEDS_START}</Callout>}
                  {elapsedStart.trim() !== '' && <TimeZonePanel choice={zoneChoice} chosen={chosenZone} onChoose={setPickedZone} timestamps={[]} />}
                </div>
              )}
              {timestampMode === 'absolute' && (
                <TimeZonePanel choice={zoneChoice} chosen={chosenZone} onChoose={setPickedZone} timestamps={timestampPreview} />
              )}
              {timestampMode === 'absolute' && detection && isLowConfidence(detection) && (
                <Callout intent={Intent.WARNING} compact icon="warning-sign" data-testid="date-confidence-notice">
                  {lowDateConfidenceMessage(detection.confidence)}
                </Callout>
              )}
            </div>
          ) : (
            <Callout intent={Intent.PRIMARY} compact icon="time">{CSV_MESSAGES.timestampColumnRequired}</Callout>
          )}

          <Checkbox checked={longFormat} onChange={(event) => setLongFormat(event.currentTarget.checked)} data-testid="csv-long-format-toggle"
            label="Long format: one row per series and time; key columns say which series (one instrument per key)" />
          {longFormat && (
            <LongFormatPanel headers={preview.headers.filter((header) => header !== timestampColumn?.name)} keyColumns={keyColumns} onKeyColumns={setKeyColumns}
              keys={keys} picked={pickedKeys} onPicked={setPickedKeys} series={series} equipmentId={state.equipmentId} busy={context.busy}
              convertedUnit={valueColumns.map((column) => conversions.get(column)?.to.trim()).find((unit) => unit) ?? null}
              partial={partial} onCreated={(created) => void instruments.mutate((list) => [...(list ?? []), ...created], { revalidate: true })} />
          )}

          <RowFiltersPanel headers={preview.headers} drafts={rowFilterDrafts} onDrafts={setRowFilterDrafts}
            leftOut={previewLeftOut(preview.headers, sampleRows, rowFilters)} shown={sampleRows.length} />

          <RowChoices duplicates={duplicates} onDuplicates={setDuplicates} missingValues={missingValues} onMissingValues={setMissingValues}
            preview={shownDuplicates} />

          {openEnded && <OpenEndChoice close={closeOpenEnd} onChange={setCloseOpenEnd} lastReadingMs={windowCheck.range?.known ? windowCheck.range.lastMs : null} />}

          {state.mode === 'edit' && state.unitOperation && (
            <ReplaceOption unitOperationId={state.unitOperation.id} columns={columns} checked={replaceExisting} onChange={setReplaceExisting} />
          )}
        </>
      )}

      {upload && <UploadProgressView upload={upload} />}

      {state.equipmentId && (
        <InstrumentWizard isOpen={wizardOpen} equipmentId={state.equipmentId} columns={wizardColumns}
          convertedUnits={new Map([...conversions].flatMap(([column, conversion]) => (conversion.to.trim() ? [[column, conversion.to.trim()] as const] : [])))}
          existingNames={instrumentList.map((i) => i.name)}
          onCreated={(column, instrument) => {
            setColumns((cols) => cols && assignColumn(cols, column, { kind: 'existing', instrumentId: instrument.id }));
            void instruments.mutate((list) => [...(list ?? []), instrument], { revalidate: true });
          }}
          onFinished={() => setWizardOpen(false)}
          onCancelled={() => setWizardOpen(false)} />
      )}
    </section>
  );
}

export const ELAPSED_NEEDS_START = "Elapsed time is counted from the unit operation's start: please set a Start Time.";

interface MappingInput {
  columns: ColumnState[] | null;
  timestampMode: TimestampMode;
  elapsedUnit: ElapsedUnit;
  replaceExisting: boolean;
  timeZone: string;
  fillForward: ReadonlySet<string>;
  longFormat: boolean;
  keyColumns: string[];
  series: ReturnType<typeof longFormatSeries>;
  /** Rows left out before reading. */
  rowFilters: RowFilter[];
  /** Columns converted to another unit on upload. */
  conversions: ReadonlyMap<string, ColumnConversion>;
  closeOpenEnd: boolean;
  /** How the server reads the file: the preview's layout, as detected or changed. */
  fileReading: CsvReading | null;
  /** The instant elapsed time counts from, when the file states it or the user typed it. */
  elapsedStart: string | null;
}

type MappingOutcome = { ok: true; mapping: CsvMapping } | { ok: false; title: string; message: string };

/** The upload mapping of the section's state: one instrument per column, or per column and key in long format. */
function mappingOf(current: MappingInput): MappingOutcome {
  const outcome = columnsMappingOf(current);
  if (!outcome.ok) return outcome;
  const conversionProblem = firstConversionProblem(current.conversions, [...new Set(outcome.mapping.columns.map((entry) => entry.column))]);
  if (conversionProblem) return { ok: false, title: CSV_TOAST_TITLES.validationError, message: conversionProblem };
  const mapping: CsvMapping = {
    ...outcome.mapping, ...(current.closeOpenEnd ? { close_open_end: true } : {}), ...(current.rowFilters.length > 0 ? { row_filters: current.rowFilters } : {}),
  };
  if (current.fileReading) mapping.reading = current.fileReading;
  if (mapping.timestamp_mode === 'elapsed' && current.elapsedStart) mapping.elapsed_start = current.elapsedStart;
  return { ok: true, mapping };
}

function columnsMappingOf(current: MappingInput): MappingOutcome {
  if (!current.columns) return { ok: false, title: CSV_TOAST_TITLES.validationError, message: CSV_MESSAGES.noInstrumentColumns };
  if (!current.longFormat) return buildMapping(current.columns, current);
  const timestamp = current.columns.find((c) => c.selected && c.assignment.kind === 'timestamp');
  if (!timestamp) return { ok: false, title: CSV_TOAST_TITLES.validationError, message: CSV_MESSAGES.timestampColumnRequired };
  if (current.keyColumns.length === 0) return { ok: false, title: CSV_TOAST_TITLES.validationError, message: 'Choose the key column of the long-format file.' };
  const mapping = buildLongFormatMapping({ ...current, timestampColumn: timestamp.name, keyColumns: current.keyColumns, series: current.series });
  return mapping ? { ok: true, mapping } : { ok: false, title: CSV_TOAST_TITLES.csvValidationError, message: CSV_MESSAGES.completeInstrumentSetupFirst };
}

/** Fill forward is remembered per instrument alias (the column, or column and key), for the next upload of such a file. */
function rememberFillForwardOf(mapping: CsvMapping): void {
  for (const entry of mapping.columns) {
    const keyColumns = keyColumnsOf(mapping);
    const alias = entry.key !== undefined && keyColumns.length > 0 ? longFormatAliasOf(entry.column, keyColumns, entry.key) : entry.column;
    rememberFillForward([alias, entry.column], entry.fill_forward);
  }
}

/** The rows no row filter leaves out. */
function keptByFilters<Row extends readonly string[]>(headers: readonly string[], rows: readonly Row[], filters: readonly RowFilter[]): Row[] {
  const indexed = filters.map((filter) => ({ filter, index: headers.indexOf(filter.column) })).filter((entry) => entry.index !== -1);
  return indexed.length === 0 ? [...rows] : rows.filter((row) => !indexed.some(({ filter, index }) => leavesOut(filter, row[index] ?? '')));
}

/** Brings a next step into view when it appears below a wide preview (a ref callback runs once per mount). */
function scrollIntoViewOnMount(element: HTMLElement | null): void {
  element?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
}

function UploadProgressView({ upload }: { upload: UploadState }) {
  const view = describeProgress(upload);
  return (
    <div className="csv-progress" data-testid="csv-upload-progress" data-phase={upload.phase}>
      <div className="csv-progress-label">
        <strong>{view.title}</strong>
        <span className="bp6-text-muted" data-testid="csv-upload-counts">{view.detail}</span>
      </div>
      <ProgressBar value={view.value} intent={view.intent} animate={view.animate} stripes={view.animate} />
      {view.notes.map((note) => <Callout key={note} compact intent={Intent.WARNING} data-testid="csv-upload-note">{note}</Callout>)}
    </div>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** The renderer for UnitOperationDialog's `csvSection` slot. */
export function renderCsvUploadSection(context: UnitOperationDialogContext) {
  return <CsvUploadSection context={context} />;
}
