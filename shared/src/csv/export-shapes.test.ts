import { describe, expect, it } from 'vitest';
import { dasWareTimeBase, distinctKeys, longFormatAlias } from './export-shapes.ts';
import { skippedRowsMessage } from './messages.ts';
import { csvMappingSchema } from '../timeseries.ts';

describe('export shapes', () => {
  it('names long-format series by column and key, and lists keys in natural order', () => {
    expect(longFormatAlias('Presens_data.O2_value', 'position', '7')).toBe('Presens_data.O2_value (position 7)');
    expect(distinctKeys(['0', '1', '10', '2', ' 1 ', '', 'A1'])).toEqual(['0', '1', '2', '10', 'A1']);
  });

  it('reads DASware timestamps as UTC and keeps TimezoneBias as the station offset (minutes ahead of UTC)', () => {
    expect(dasWareTimeBase(null)).toBeNull();
    expect(dasWareTimeBase(120)).toMatchObject({ zone: 'UTC', stationOffsetMinutes: 120 });
    expect(dasWareTimeBase(120)!.description).toContain('UTC+02:00');
    expect(dasWareTimeBase(-300)!.description).toContain('UTC-05:00');
  });

  it('says why rows were skipped', () => {
    expect(skippedRowsMessage({ badTimestamp: 0, outsideWindow: 0, empty: 0 })).toBeNull();
    expect(skippedRowsMessage({ badTimestamp: 9, outsideWindow: 30, empty: 200 }))
      .toBe("239 rows skipped: 200 without a value in the mapped columns, 30 outside the unit operation's time window, 9 with an empty or unreadable timestamp.");
    expect(skippedRowsMessage({ badTimestamp: 1, outsideWindow: 0, empty: 0, unselectedKey: 0 })).toBe('1 row skipped: 1 with an empty or unreadable timestamp.');
    expect(skippedRowsMessage({ badTimestamp: 0, outsideWindow: 0, empty: 0, unselectedKey: 1490 })).toBe('1,490 rows skipped: 1,490 of keys not mapped to an instrument.');
  });
});

describe('upload mapping', () => {
  const base = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: 1 }] };
  const issues = (mapping: unknown) => {
    const result = csvMappingSchema.safeParse(mapping);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('takes a zone, fill forward and long-format keys; fill forward is off unless asked', () => {
    const parsed = csvMappingSchema.parse({ ...base, time_zone: 'Europe/Amsterdam' });
    expect(parsed.columns[0]).toEqual({ column: 'v', instrument_id: 1, fill_forward: false });
    expect(issues({ ...base, columns: [{ column: 'v', instrument_id: 1, fill_forward: true }], time_zone: '+05:30' })).toEqual([]);
    expect(issues({ ...base, key_column: 'position', columns: [{ column: 'v', instrument_id: 1, key: '0' }, { column: 'v', instrument_id: 2, key: '1' }] })).toEqual([]);
  });

  it('refuses unknown zones and inconsistent long-format mappings with clear messages', () => {
    expect(issues({ ...base, time_zone: 'Mars/Olympus' }))
      .toEqual(["time_zone: Unknown time zone 'Mars/Olympus': use an IANA zone name such as Europe/Amsterdam, UTC, or a fixed offset such as +02:00"]);
    expect(issues({ ...base, columns: [{ column: 'v', instrument_id: 1, key: '0' }] })).toEqual(['columns.0.key: key needs key_column (long format)']);
    expect(issues({ ...base, key_column: 'position' })).toEqual(['columns.0.key: every column needs a key in long format']);
    expect(issues({ ...base, key_column: 'time', columns: [{ column: 'v', instrument_id: 1, key: '0' }] })).toEqual(['key_column: the key column cannot be the timestamp column']);
    expect(issues({ ...base, key_column: 'p', columns: [{ column: 'v', instrument_id: 1, key: '0' }, { column: 'v', instrument_id: 2, key: '0' }] }))
      .toEqual(["columns.1: column 'v' with key '0' is mapped twice"]);
  });
});
