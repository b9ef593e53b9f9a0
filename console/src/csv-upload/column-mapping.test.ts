import { describe, expect, it } from 'vitest';
import { parseCsvPreview } from '@bioprocess/shared/csv/preview';
import {
  assignColumn, assignMatchingAsNew, blockedSubmitLabel, columnRule, buildMapping, guessTimestampColumn, initialColumns, instrumentNameError, newInstrumentColumns,
  reconcileWithInstruments, setSelected, carryByPosition, conversionProblem, conversionStart, firstConversionProblem,
} from './column-mapping.ts';
import { suggestInstrument } from './instrument-suggestion.ts';
import { editPreviewTable } from './edit-preview.ts';
import { parseSseBuffer } from '../api/job-events.ts';
import { describeProgress } from './upload-progress.ts';
import { readCsvPreview, PREVIEW_BYTES } from './read-preview.ts';

const options = { timestampMode: 'absolute' as const, elapsedUnit: 'seconds' as const, replaceExisting: true };

describe('column assignment', () => {
  const headers = ['timestamp', 'od_reading', 'angle', 'channel'];
  const instruments = [{ id: 7, name: 'OD probe', alias: 'od_reading' }];

  it('starts with the timestamp and the columns matching an instrument alias or name', () => {
    const columns = initialColumns(headers, 0, instruments);
    expect(columns.map((c) => [c.name, c.selected, c.assignment.kind])).toEqual([
      ['timestamp', true, 'timestamp'], ['od_reading', true, 'existing'], ['angle', false, 'empty'], ['channel', false, 'empty'],
    ]);
    expect(blockedSubmitLabel(columns)).toBeNull();
  });

  it('blocks the submit while a selected column is empty or a new instrument not yet created', () => {
    let columns = initialColumns(headers, 0, instruments);
    columns = setSelected(columns, 'angle', true);
    expect(blockedSubmitLabel(columns)).toBe('Complete Instrument Setup First');
    columns = assignColumn(columns, 'angle', { kind: 'new' });
    expect(blockedSubmitLabel(columns)).toBe('Complete Instrument Setup First');
    expect(newInstrumentColumns(columns).map((c) => c.name)).toEqual(['angle']);
    columns = assignColumn(columns, 'angle', { kind: 'existing', instrumentId: 8 });
    expect(blockedSubmitLabel(columns)).toBeNull();
    columns = setSelected(columns, 'angle', false);
    expect(columns[2]!.assignment.kind).toBe('empty');
    expect(blockedSubmitLabel(null)).toBeNull();
  });

  it('keeps a single timestamp column', () => {
    const columns = assignColumn(initialColumns(headers, 0, []), 'channel', { kind: 'timestamp' });
    expect(columns.filter((c) => c.assignment.kind === 'timestamp').map((c) => c.name)).toEqual(['channel']);
    expect(columns[0]!.selected).toBe(false);
  });

  it('builds the upload mapping', () => {
    const result = buildMapping(initialColumns(headers, 0, instruments), options);
    expect(result).toEqual({ ok: true, mapping: { timestamp_column: 'timestamp', timestamp_mode: 'absolute', columns: [{ column: 'od_reading', instrument_id: 7, fill_forward: false }], replace_existing: true } });
    const zoned = buildMapping(initialColumns(headers, 0, instruments), { ...options, timeZone: 'Europe/Amsterdam', fillForward: new Set(['od_reading']) });
    expect(zoned.ok && zoned.mapping).toMatchObject({ time_zone: 'Europe/Amsterdam', columns: [{ column: 'od_reading', instrument_id: 7, fill_forward: true }] });
    const elapsed = buildMapping(initialColumns(headers, 0, instruments), { ...options, timestampMode: 'elapsed', elapsedUnit: 'hours', replaceExisting: false });
    expect(elapsed.ok && elapsed.mapping).toMatchObject({ timestamp_mode: 'elapsed', elapsed_unit: 'hours', replace_existing: false });
  });

  it('answers the fixed messages when the mapping is incomplete', () => {
    expect(buildMapping(initialColumns(headers, -1, instruments), options)).toMatchObject({
      ok: false, message: 'Please select a timestamp column from your CSV data. This is required to create the unit operation.',
    });
    expect(buildMapping(initialColumns(headers, 0, []), options)).toMatchObject({
      ok: false, message: 'No instrument columns selected. Please select at least one instrument column.',
    });
    const pending = assignColumn(initialColumns(headers, 0, []), 'angle', { kind: 'new' });
    expect(buildMapping(pending, options)).toMatchObject({ ok: false, message: 'Cannot upload CSV: Please create instruments for these columns first: angle' });
  });

  it('follows the equipment\'s instrument list', () => {
    const columns = initialColumns(headers, 0, instruments);
    const moved = reconcileWithInstruments(columns, [{ id: 9, name: 'angle', alias: null }]);
    expect(moved.map((c) => c.assignment)).toEqual([
      { kind: 'timestamp' }, { kind: 'empty' }, { kind: 'existing', instrumentId: 9 }, { kind: 'empty' },
    ]);
    expect(moved[1]!.selected).toBe(true);
  });

  it('guesses the timestamp column of real instrument exports', () => {
    const pioreactor = parseCsvPreview('timestamp,od_reading,angle,channel\n2025-02-26T10:27:40.854742Z,0.26,90,2\n2025-02-26T10:27:45.841730Z,0.27,90,2\n')!;
    expect(guessTimestampColumn(pioreactor.headers, pioreactor.rows)).toBe(0);
    const chibio = parseCsvPreview('exp_time,od_measured\r\n0.14,1.54\r\n60.2,1.55\r\n120.3,1.56\r\n')!;
    expect(guessTimestampColumn(chibio.headers, chibio.rows)).toBe(0);
    const chronograf = parseCsvPreview('"Presens","time"\n"74.3","2021-09-30T15:24:29.000Z"\n"72.1","2021-09-30T15:25:29.000Z"')!;
    expect(guessTimestampColumn(chronograf.headers, chronograf.rows)).toBe(1);
    const none = parseCsvPreview('a,b\n1,2\nx,y\n')!;
    expect(guessTimestampColumn(none.headers, none.rows)).toBe(-1);
  });
});

describe('instrument wizard rules', () => {
  it('rejects names taken on the equipment or earlier in the wizard, case-insensitively', () => {
    const message = 'There is already an instrument with this name, provide a different name.';
    expect(instrumentNameError('OD Probe', ['od probe'], [])).toBe(message);
    expect(instrumentNameError('angle ', [], ['Angle'])).toBe(message);
    expect(instrumentNameError('channel', ['od probe'], ['angle'])).toBeNull();
    expect(instrumentNameError('  ', [], [])).toBe('Name is required.');
  });

  it('suggests a type and unit from the column name', () => {
    // The unit is the header's own; a header without one is in arbitrary units, never a guessed OD600.
    expect(suggestInstrument('od_reading')).toMatchObject({ type: 'optical_density', unit: '{a.u.}' });
    expect(suggestInstrument('Unit 1.T1.PV [°C]')).toMatchObject({ type: 'temperature', unit: 'celsius' });
    expect(suggestInstrument('Unit 1.N1.PV [rpm]')).toMatchObject({ type: 'stir_rate', unit: 'rpm' });
    expect(suggestInstrument('Presens_data.O2_value')).toMatchObject({ type: 'dissolved_o2', unit: '{a.u.}' });
    expect(suggestInstrument('channel')).toMatchObject({ type: '', unit: '{a.u.}' });
  });
});

describe('preview from the first part of the file', () => {
  function fakeFile(text: string, name = 'data.csv', type = 'text/csv', size?: number) {
    const bytes = new TextEncoder().encode(text);
    const sliced: [number, number][] = [];
    return {
      sliced,
      name, type, size: size ?? bytes.length,
      slice(start: number, end: number) {
        sliced.push([start, end]);
        return { arrayBuffer: async () => bytes.slice(start, end).buffer };
      },
    };
  }

  it('reads only the first part of a large file', async () => {
    const header = 'time,value\n';
    const row = '2025-01-01T00:00:00Z,1.5\n';
    const file = fakeFile(header + row.repeat(20_000), 'big.csv', 'text/csv', 5 * 1024 ** 3 / 4);
    const outcome = await readCsvPreview(file);
    expect(file.sliced).toEqual([[0, PREVIEW_BYTES]]);
    expect(outcome.ok && outcome.partial).toBe(true);
    expect(outcome.ok && outcome.preview.headers).toEqual(['time', 'value']);
  });

  it('answers the fixed messages for bad files', async () => {
    expect(await readCsvPreview(fakeFile('a,b\n1,2', 'data.docx'))).toMatchObject({ ok: false, title: 'Invalid file', message: 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)' });
    expect(await readCsvPreview(fakeFile('', 'empty.csv'))).toMatchObject({ ok: false, title: 'Invalid file', message: 'File is empty' });
    expect(await readCsvPreview(fakeFile('a,b', 'x.csv', 'image/png'))).toMatchObject({ ok: false, message: 'Invalid file type. Please select a CSV file.' });
    expect(await readCsvPreview(fakeFile('   \n\n', 'blank.csv'))).toMatchObject({ ok: false, title: 'Invalid CSV content', message: 'File content is empty' });
    expect(await readCsvPreview(fakeFile('a,b\n<script>alert(1)</script>,2', 'evil.csv'))).toMatchObject({
      ok: false, title: 'Invalid CSV content', message: 'File contains potentially malicious content',
    });
  });
});

describe('edit preview, job events and progress', () => {
  it('shows the first 20 time points, one column per instrument', () => {
    const readings = Array.from({ length: 60 }, (_, i) => ({ ts: new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 2) * 60_000).toISOString(), instrumentId: 1 + (i % 2), value: i }));
    const table = editPreviewTable(readings);
    expect(table.instrumentIds).toEqual([1, 2]);
    expect(table.rows).toHaveLength(20);
    expect(table.rows[0]!.values.get(2)).toBe(1);
  });

  it('splits server-sent events and keeps the unfinished rest', () => {
    const { events, rest } = parseSseBuffer('event: progress\ndata: {"a":1}\n\n: keep-alive\n\nevent: end\ndata: {"a"');
    expect(events).toEqual([{ event: 'progress', data: '{"a":1}' }]);
    expect(rest).toBe('event: end\ndata: {"a"');
  });

  it('describes each phase with rows and points', () => {
    const job = {
      id: 'j', kind: 'csv' as const, state: 'running' as const, result: null, error: null, created_at: '', updated_at: '',
      progress: { bytes_total: 200, bytes_read: 50, rows_read: 1234, rows_skipped: 2, points_written: 1000 },
    };
    expect(describeProgress({ phase: 'uploading', sent: 25, total: 100, job: null })).toMatchObject({ detail: '25% sent', value: 0.25 });
    expect(describeProgress({ phase: 'processing', sent: 100, total: 100, job })).toMatchObject({ detail: '1,234 rows read · 1,000 points written', value: 0.25 });
    expect(describeProgress({ phase: 'done', sent: 100, total: 100, job: { ...job, state: 'completed' } })).toMatchObject({ value: 1, intent: 'success', detail: '1,234 rows read · 1,000 points written · 2 rows skipped' });
    const withReasons = { ...job, state: 'completed' as const, result: { skipped_message: '2 rows skipped: 2 without a value in the mapped columns.' } };
    expect(describeProgress({ phase: 'done', sent: 100, total: 100, job: withReasons }).detail)
      .toBe('1,234 rows read · 1,000 points written · 2 rows skipped: 2 without a value in the mapped columns.');
  });
});

describe('columns matching a rule', () => {
  const columns = ['Time', 'A1', 'A01', 'B12', 'P24', 'Q1', 'A25', 'TAG-001 pH', 'tag-002 pO2', 'Temp'].map((name) => ({
    name, selected: name === 'Time' || name === 'B12', assignment: name === 'Time' ? { kind: 'timestamp' as const } : name === 'B12' ? { kind: 'existing' as const, instrumentId: 7 } : { kind: 'empty' as const },
  }));

  it("'wells' matches a 96- or 384-well plate's well names, and nothing else", () => {
    const matches = columnRule('Wells')!;
    expect(columns.map((c) => c.name).filter(matches)).toEqual(['A1', 'A01', 'B12', 'P24']);
  });

  it('* and ? match any characters and one, case-insensitively; other characters stand for themselves', () => {
    expect(columns.map((c) => c.name).filter(columnRule('TAG-*')!)).toEqual(['TAG-001 pH', 'tag-002 pO2']);
    expect(columns.map((c) => c.name).filter(columnRule('A?')!)).toEqual(['A1']);
    expect(['a.b', 'axb'].filter(columnRule('a.b')!)).toEqual(['a.b']);
    expect(columnRule('  ')).toBeNull();
  });

  it('makes every matching unassigned column a new instrument, keeping the timestamp and instruments found by alias', () => {
    const next = assignMatchingAsNew(columns, columnRule('wells')!);
    expect(next.filter((c) => c.assignment.kind === 'new').map((c) => c.name)).toEqual(['A1', 'A01', 'P24']);
    expect(next.find((c) => c.name === 'B12')!.assignment).toEqual({ kind: 'existing', instrumentId: 7 });
    expect(next.find((c) => c.name === 'Time')!.assignment).toEqual({ kind: 'timestamp' });
    expect(next.every((c) => c.assignment.kind === 'empty' || c.selected)).toBe(true);
  });
});

describe('unit conversion and renamed columns in the mapping', () => {
  it('starts a conversion at the header unit and sends it only when complete and different', () => {
    expect(conversionStart('Feed (mL/h)')).toEqual({ from: 'mL/h', to: '' });
    expect(conversionStart('Temp [°C]')).toEqual({ from: 'celsius', to: '' });
    const columns = [
      { name: 'time', selected: true, assignment: { kind: 'timestamp' as const } },
      { name: 'Feed (mL/h)', selected: true, assignment: { kind: 'existing' as const, instrumentId: 4 } },
      { name: 'pH', selected: true, assignment: { kind: 'existing' as const, instrumentId: 5 } },
    ];
    const conversions = new Map([['Feed (mL/h)', { from: 'mL/h', to: ' L/h ' }], ['pH', { from: 'pH', to: '' }]]);
    const result = buildMapping(columns, { timestampMode: 'absolute', elapsedUnit: 'seconds', replaceExisting: false, conversions });
    expect(result.ok && result.mapping.columns).toEqual([
      { column: 'Feed (mL/h)', instrument_id: 4, fill_forward: false, convert_unit: { from: 'mL/h', to: 'L/h' } },
      { column: 'pH', instrument_id: 5, fill_forward: false },
    ]);
  });

  it('names both units when they do not convert', () => {
    expect(conversionProblem({ from: 'mL/h', to: 'g/L' })).toBe("'mL/h' cannot be converted to 'g/L': the two units do not measure the same quantity.");
    expect(conversionProblem({ from: 'mL/h', to: '' })).toBeNull();
    expect(firstConversionProblem(new Map([['Feed', { from: 'mL/h', to: 'g/L' }]]), ['time', 'Feed'])).toBe("Column 'Feed': 'mL/h' cannot be converted to 'g/L': the two units do not measure the same quantity.");
  });

  it('keeps each column\'s choices by position when a header-less file\'s columns are renamed', () => {
    const before = [
      { name: 'Column 1', selected: false, assignment: { kind: 'empty' as const } },
      { name: 'Column 2', selected: true, assignment: { kind: 'timestamp' as const } },
    ];
    expect(carryByPosition(before, ['Record', 'Measured', 'Column 3'])).toEqual([
      { name: 'Record', selected: false, assignment: { kind: 'empty' } },
      { name: 'Measured', selected: true, assignment: { kind: 'timestamp' } },
      { name: 'Column 3', selected: false, assignment: { kind: 'empty' } },
    ]);
  });
});

describe('the outcome of an upload with row filters', () => {
  it('shows which rows the filters left out, as the server worded it', () => {
    const job = {
      id: 'j', kind: 'csv' as const, state: 'completed' as const, error: null, created_at: '', updated_at: '',
      progress: { bytes_total: 1, bytes_read: 1, rows_read: 9, rows_skipped: 5, points_written: 4 },
      result: { rows_skipped_filtered: 5, filtered_message: 'Left out by row filters: 5 rows where Sample Type is Calibrator (5 Calibrator).' },
    };
    expect(describeProgress({ phase: 'done', sent: 1, total: 1, job }).notes).toEqual(['Left out by row filters: 5 rows where Sample Type is Calibrator (5 Calibrator).']);
  });
});
