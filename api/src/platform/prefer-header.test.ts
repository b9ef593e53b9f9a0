import { describe, expect, it } from 'vitest';
import { prefersMinimalReturn } from './prefer-header.ts';

describe('prefersMinimalReturn', () => {
  it('finds return=minimal among other preferences, quoted, with parameters, in any case', () => {
    expect(prefersMinimalReturn('return=minimal')).toBe(true);
    expect(prefersMinimalReturn('respond-async, Return = "MINIMAL"; foo=bar')).toBe(true);
    expect(prefersMinimalReturn('wait=10,return=minimal')).toBe(true);
  });

  it('ignores what it does not understand', () => {
    for (const header of [undefined, '', 'return=representation', 'return', 'minimal', 'return=minimalist', 'x-return=minimal', 'handling=lenient; return=minimal']) {
      expect(prefersMinimalReturn(header)).toBe(false);
    }
  });
});
