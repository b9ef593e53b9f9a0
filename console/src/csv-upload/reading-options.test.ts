import { describe, expect, it } from 'vitest';
import { dasWareTimeBase, detectTimestampFormat } from '@bioprocess/shared/csv/index';
import { buildLongFormatMapping, chooseZone, longFormatSeries, previewTimestamps, recallFillForward, rememberFillForward } from './reading-options.ts';

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
    const series = longFormatSeries(['O2'], 'position', ['0', '1'], instruments);
    expect(series.map((entry) => [entry.alias, entry.instrument?.id ?? null])).toEqual([['O2 (position 0)', 5], ['O2 (position 1)', null]]);
    const options = { timestampColumn: 'time', keyColumn: 'position', fillForward: new Set<string>(), timestampMode: 'absolute' as const, elapsedUnit: undefined, replaceExisting: false, timeZone: 'UTC' };
    expect(buildLongFormatMapping({ ...options, series })).toBeNull();
    expect(buildLongFormatMapping({ ...options, series: series.slice(0, 1) })).toEqual({
      timestamp_column: 'time', timestamp_mode: 'absolute', time_zone: 'UTC', key_column: 'position', replace_existing: false,
      columns: [{ column: 'O2', key: '0', instrument_id: 5, fill_forward: false }],
    });
  });
});
