import { describe, expect, it } from 'vitest';
import { isEntryActive, SIDEBAR_ENTRIES } from './navigation.ts';

const entry = (id: string) => SIDEBAR_ENTRIES.find((candidate) => candidate.id === id)!;

describe('sidebar active entry', () => {
  it('matches /dashboard exactly', () => {
    expect(isEntryActive(entry('dashboard'), '/dashboard')).toBe(true);
    expect(isEntryActive(entry('dashboard'), '/dashboard/extra')).toBe(false);
  });

  it('matches the other entries by path prefix', () => {
    expect(isEntryActive(entry('runs'), '/runs/overview')).toBe(true);
    expect(isEntryActive(entry('runs'), '/runs/12/unit-operations/3')).toBe(true);
    expect(isEntryActive(entry('runs'), '/runsheet')).toBe(false);
    expect(isEntryActive(entry('data'), '/data')).toBe(true);
    expect(isEntryActive(entry('data'), '/dashboard')).toBe(false);
  });

  it('links Analyze and Integrations to their pages', () => {
    expect(entry('analyze').comingSoon).toBeUndefined();
    expect(isEntryActive(entry('analyze'), '/analyze')).toBe(true);
    expect(entry('integrations').comingSoon).toBeUndefined();
    expect(isEntryActive(entry('integrations'), '/integrations')).toBe(true);
  });
});
