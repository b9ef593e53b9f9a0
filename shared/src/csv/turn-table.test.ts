import { describe, expect, it } from 'vitest';
import { detectCsvLayout, TRANSPOSED_NOTICE } from './detect.ts';
import { turnTable } from './turn-table.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('turning a transposed table', () => {
  // A plate reader's kinetic block: a preamble, cycle numbers across, then a row of times, a
  // temperature and a row per well; a note block after the table's end.
  const text = [
    'Application: Reader', 'Start Time:,20.03.2024 08:00:00', '',
    'Cycle Nr.,1,2,3,4,', 'Time [s],0,60,120,180,', 'Temp. [°C],37,37.1,37,36.9,',
    'A1,0.1,0.2,0.3,0.4,', 'A2,"0,5",0.6,,0.8,', '', 'End Time:,20.03.2024 08:03:00',
  ].join('\n');

  it('finds the shape: time runs across the columns under a row of cycle numbers', () => {
    const detected = detectCsvLayout(bytes(text));
    expect(detected.ok && detected.layout.orientation).toBe('columns');
    expect(detected.ok && detected.layout.notices).toContain(TRANSPOSED_NOTICE);
  });

  it('turns the table, keeps the preamble above it, drops what follows its end and the empty trailing column', () => {
    const detected = detectCsvLayout(bytes(text));
    if (!detected.ok) throw new Error(detected.message);
    const turned = turnTable(text, detected.layout);
    expect(turned).toBe([
      'Application: Reader', 'Start Time:,20.03.2024 08:00:00', '',
      'Cycle Nr.,Time [s],Temp. [°C],A1,A2', '1,0,37,0.1,"0,5"', '2,60,37.1,0.2,0.6', '3,120,37,0.3,', '4,180,36.9,0.4,0.8', '',
    ].join('\n'));
    const again = detectCsvLayout(bytes(turned));
    if (!again.ok) throw new Error(again.message);
    expect(again.layout).toMatchObject({ orientation: 'rows', header_line: 4, time_column: 'Time [s]', time: { mode: 'elapsed', elapsed_unit: 'seconds' }, start: { wallClock: '2024-03-20T08:00:00' } });
    expect(again.layout.headers).toEqual(['Cycle Nr.', 'Time [s]', 'Temp. [°C]', 'A1', 'A2']);
  });
});
