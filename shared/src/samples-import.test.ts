import { describe, expect, it } from 'vitest';
import { matchesExcludedWord, readReportCell, sampleIdKey } from './samples-import.ts';

describe('report cells', () => {
  it('reads numbers as analyzers write them', () => {
    expect(readReportCell('  5.9734')).toEqual({ kind: 'value', value: 5.9734, flag: null });
    expect(readReportCell('0,56')).toEqual({ kind: 'value', value: 0.56, flag: null });
    expect(readReportCell('1.2e3')).toEqual({ kind: 'value', value: 1200, flag: null });
    expect(readReportCell('   ')).toEqual({ kind: 'empty' });
  });

  it('keeps a limit written with its side as a flag with that limit', () => {
    expect(readReportCell('< 0.4000')).toEqual({ kind: 'value', value: 0.4, flag: 'below_limit' });
    expect(readReportCell('>50')).toEqual({ kind: 'value', value: 50, flag: 'above_limit' });
    expect(readReportCell('≤ 0.1')).toEqual({ kind: 'value', value: 0.1, flag: 'below_limit' });
    expect(readReportCell('>= 2')).toEqual({ kind: 'value', value: 2, flag: 'above_limit' });
  });

  it('takes the limit of a flag word from the limit column, and refuses it without one', () => {
    expect(readReportCell('<LOQ', '0.2')).toEqual({ kind: 'value', value: 0.2, flag: 'below_limit' });
    expect(readReportCell('LOQ', '< 0.2')).toEqual({ kind: 'value', value: 0.2, flag: 'below_limit' });
    expect(readReportCell('Below range', '0.1')).toEqual({ kind: 'value', value: 0.1, flag: 'below_limit' });
    expect(readReportCell('Above range', '30')).toEqual({ kind: 'value', value: 30, flag: 'above_limit' });
    expect(readReportCell('LOQ')).toEqual({ kind: 'error', message: "'LOQ' is flagged without its limit: map the limit column." });
    expect(readReportCell('BLQ', 'n/a')).toEqual({ kind: 'error', message: "The limit 'n/a' is not a number." });
  });

  it('refuses text that is neither a number nor a flag', () => {
    expect(readReportCell('10.00%')).toEqual({ kind: 'error', message: "'10.00%' is not a number or a flagged limit (< 0.5, > 50)." });
    expect(readReportCell('<')).toMatchObject({ kind: 'error' });
  });
});

describe('exclusion words and sample ids', () => {
  it('matches whole words in any case, digits allowed after them', () => {
    const words = ['Calibrator', 'Control', 'QC', 'Blank', 'Standard'];
    for (const value of ['Calibrator 1', 'QC-High', 'qc1', 'BLANK', 'Control2', 'Standard curve']) expect(matchesExcludedWord(value, words), value).toBe(true);
    for (const value of ['StandardCHO', 'Controller', 'BR1-D1', 'SAMPLE 0001']) expect(matchesExcludedWord(value, words), value).toBe(false);
  });

  it('matches sample ids regardless of case and surrounding spaces', () => {
    expect(sampleIdKey(' Sample 0002 ')).toBe(sampleIdKey('SAMPLE 0002'));
  });
});
