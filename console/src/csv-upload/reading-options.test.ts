import { describe, expect, it } from 'vitest';
import { dasWareTimeBase, detectTimestampFormat } from '@bioprocess/shared/csv/index';
import {
  buildLongFormatMapping, chooseZone, longFormatSeries, previewDuplicates, previewLeftOut, previewTimestamps, recallFillForward, rememberFillForward, rowFiltersOf,
} from './reading-options.ts';

class MemoryStore {
  private readonly values = new Map<string, string>();
  getItem(key: string) { return this.values.get(key) ?? null; }
  setItem(key: string, value: string) { this.values.set(key, value); }
  removeItem(key: string) { this.values.delete(key); }
}

describe('reading options', () => {
  it("uses the file's zone when it states one, else the user's choice", () => {
    expect(chooseZone({ timeBase: dasWareTimeBase(120), samples: ['2020-07-14 09:55:33'], chosen: 'Europe/Paris', organizationZone: 'UTC' }))
      .toMatchObject({ zone: 'UTC', source: 'file' });
    expect(chooseZone({ timeBase: null, samples: ['2021-09-30T15:24:29.000Z', ''], chosen: 'Europe/Paris', organizationZone: 'UTC' }))
      .toMatchObject({ zone: 'UTC', source: 'file', description: 'Every timestamp carries its own UTC offset' });
    expect(chooseZone({ timeBase: null, samples: ['2020-07-14 09:55:33'], chosen: 'Europe/Paris', organizationZone: 'Europe/Paris' }))
      .toEqual({ zone: 'Europe/Paris', source: 'user', description: "The organisation's time zone" });
  });

  it('shows the instants the zone makes of the first timestamps', () => {
    const values = ['2021-10-31 02:30:00', '2021-10-31 02:00:00', 'n/a'];
    const detection = detectTimestampFormat(values);
    expect(previewTimestamps(values, detection, 'Europe/Amsterdam')).toEqual([
      { raw: '2021-10-31 02:30:00', utc: '2021-10-31 00:30:00 UTC' },
      { raw: '2021-10-31 02:00:00', utc: '2021-10-31 01:00:00 UTC' },
      { raw: 'n/a', utc: null },
    ]);
  });

  it('remembers fill forward per instrument alias', () => {
    const store = new MemoryStore();
    expect(recallFillForward(['Unit 1.T1.PV [°C]'], store)).toBe(false);
    rememberFillForward(['Unit 1.T1.PV [°C]'], true, store);
    expect(recallFillForward(['Unit 1.T1.PV [°C]'], store)).toBe(true);
    expect(recallFillForward(['Unit 1.pH1.PV [pH]'], store)).toBe(false);
    rememberFillForward(['Unit 1.T1.PV [°C]'], false, store);
    expect(recallFillForward(['Unit 1.T1.PV [°C]'], store)).toBe(false);
  });

  it('maps one instrument per key of a long-format file once each exists', () => {
    const instruments = [{ id: 5, name: 'Reactor 0 DO', alias: 'O2 (position 0)' }];
    const series = longFormatSeries(['O2'], ['position'], ['0', '1'], instruments);
    expect(series.map((entry) => [entry.alias, entry.instrument?.id ?? null])).toEqual([['O2 (position 0)', 5], ['O2 (position 1)', null]]);
    const options = { timestampColumn: 'time', keyColumns: ['position'], fillForward: new Set<string>(), timestampMode: 'absolute' as const, elapsedUnit: undefined, replaceExisting: false, timeZone: 'UTC' };
    expect(buildLongFormatMapping({ ...options, series })).toBeNull();
    expect(buildLongFormatMapping({ ...options, series: series.slice(0, 1) })).toEqual({
      timestamp_column: 'time', timestamp_mode: 'absolute', time_zone: 'UTC', key_column: 'position', replace_existing: false,
      columns: [{ column: 'O2', key: '0', instrument_id: 5, fill_forward: false }],
    });
  });

  it('maps each combination of a composite key, with the unit conversion asked for', () => {
    const instruments = [{ id: 7, name: 'A1 OD', alias: 'Value (A1 · OD600)' }, { id: 8, name: 'A1 GFP', alias: 'Value (A1 · GFP)' }];
    const series = longFormatSeries(['Value'], ['Well', 'Channel'], ['A1 · OD600', 'A1 · GFP'], instruments);
    expect(series.map((entry) => entry.instrument?.id)).toEqual([7, 8]);
    const mapping = buildLongFormatMapping({
      timestampColumn: 'Time', keyColumns: ['Well', 'Channel'], series, fillForward: new Set(), timestampMode: 'absolute', elapsedUnit: undefined,
      replaceExisting: false, timeZone: 'UTC', conversions: new Map([['Value', { from: 'mL/h', to: 'L/h' }]]),
    });
    expect(mapping).toMatchObject({
      key_columns: ['Well', 'Channel'],
      columns: [{ column: 'Value', key: 'A1 · OD600', instrument_id: 7, convert_unit: { from: 'mL/h', to: 'L/h' } }, { column: 'Value', key: 'A1 · GFP', instrument_id: 8 }],
    });
    expect(mapping).not.toHaveProperty('key_column');
    // A time repeats within the preview only when the same combination repeats it.
    const rows = [['t1', 'A1', 'OD600'], ['t1', 'A1', 'GFP'], ['t2', 'A1', 'OD600'], ['t2', 'A1', 'OD600']];
    expect(previewDuplicates(rows, 0, [1, 2])).toEqual({ count: 1, firstTime: 't2' });
    expect(previewDuplicates(rows, 0, [1])).toEqual({ count: 2, firstTime: 't1' });
  });

  it('turns the filter editor into the upload\'s row filters and counts what they leave out of the preview', () => {
    const filters = rowFiltersOf([
      { column: 'Sample Type', operator: 'equals', values: 'Calibrator, Control, ,Calibrator' },
      { column: 'Sample', operator: 'matches', values: '' },
      { column: '', operator: 'equals', values: 'x' },
    ]);
    expect(filters).toEqual([{ column: 'Sample Type', operator: 'equals', values: ['Calibrator', 'Control'] }]);
    const rows = [['Calibrator', 'C1'], ['Sample', 'R1'], ['control', 'Q'], ['Sample', 'R2']];
    expect(previewLeftOut(['Sample Type', 'Sample'], rows, filters)).toBe(2);
    expect(previewLeftOut(['Other'], rows, filters)).toBe(0);
  });
});
