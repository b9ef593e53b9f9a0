import { describe, expect, it } from 'vitest';
import { detectDelimiter } from './delimiter.ts';

describe('detectDelimiter', () => {
  it.each([
    ['comma', 'time,a,b\n1,2,3\n4,5,6\n', ','],
    ['semicolon with decimal commas', 'time;a;b\n1;2,5;3,25\n4;5,5;6,75\n', ';'],
    ['tab', 'time\ta\tb\n1\t2,5\t3\n', '\t'],
    ['pipe', 'time|a|b\n1|2|3\n', '|'],
    ['quoted commas inside semicolon fields', '"a,b";"c,d"\n"1,2";"3"\n"4";"5,6,7"\n', ';'],
    ['every field quoted', '"time","value","position"\n"2021-09-30T15:24:29.000Z","74.3","0"', ','],
  ])('detects %s', (_name, text, expected) => {
    expect(detectDelimiter(text, { partial: false })).toBe(expected);
  });

  it('falls back to comma for a single column', () => {
    expect(detectDelimiter('value\n1\n2\n')).toBe(',');
  });

  it('judges a multi-section file on its data table', () => {
    const text = [
      '"[Info]"',
      '"Product","Version";"Host"',
      '"[TrackData1]"',
      '"Timestamp";"Duration";"Unit 1.pH1.PV [pH]"',
      '2020-07-14 09:55:33;0;7,01',
      '2020-07-14 09:56:03;0.0003;""',
      '',
      '"[Events]"',
    ].join('\r\n');
    expect(detectDelimiter(text)).toBe(';');
  });
});
