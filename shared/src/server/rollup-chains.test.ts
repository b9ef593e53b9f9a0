import { describe, expect, it } from 'vitest';
import { RollupChains } from './rollup-chains.ts';

const link = (version: string) => ({ version, figure: { organizationId: 1, instrumentId: 1, start: 0, points: 1, count: 1, sum: 1, min: 1, max: 1 } });

describe('rollup chains', () => {
  it('keeps at most its bound of links, dropping the least recently stored first', () => {
    const chains = new RollupChains(8);
    for (let index = 0; index < 8; index += 1) chains.set(`k${index}`, link(String(index)));
    // Stored again: the most recent now.
    chains.set('k0', link('10'));
    chains.set('k8', link('8'));
    // Over the bound: the oldest quarter goes at once (k1, k2, k3), the rest stays.
    expect(['k1', 'k2', 'k3'].map((key) => chains.get(key))).toEqual([undefined, undefined, undefined]);
    expect(['k4', 'k5', 'k6', 'k7', 'k8'].map((key) => chains.get(key)?.version)).toEqual(['4', '5', '6', '7', '8']);
    expect(chains.get('k0')?.version).toBe('10');
    chains.forget(['k0']);
    expect(chains.get('k0')).toBeUndefined();
  });

  it('stays bounded under a long stream of new links', () => {
    const chains = new RollupChains(1_000);
    for (let index = 0; index < 100_000; index += 1) chains.set(`k${index}`, link(String(index)));
    expect(chains.get('k99999')?.version).toBe('99999');
    expect(chains.get('k98000')).toBeUndefined();
  });
});
