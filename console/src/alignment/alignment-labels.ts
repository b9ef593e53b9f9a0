/** The words of an alignment choice: its kinds, why a unit operation was left out, and what time zero is. */
import type { Alignment } from '@bioprocess/shared/analysis';
import { titleCaseType } from '../entities/format.ts';

export const ALIGNMENT_LABELS = { start: 'Start of the unit operation', event: 'First comment naming a word', threshold: 'Threshold crossing' } as const;

export const LEFT_OUT_LABELS: Record<string, string> = {
  no_start: 'no start time',
  event_not_found: 'event not found',
  no_instrument: 'no instrument of this type',
  no_property: 'a unit-operation property its formula needs is not set',
  no_data: 'no readings',
};

/** An instrument type as a person reads it ('dissolved_o2' -> 'Dissolved O2'; pH stays pH). */
export function alignmentParameterLabel(type: string): string {
  return type === 'pH' ? 'pH' : titleCaseType(type);
}

/** What minute 0 is, for an axis title ('Time since …'). */
export function timeZeroLabel(alignment: Alignment): string {
  if (alignment.kind === 'start') return 'unit operation start';
  if (alignment.kind === 'event') return `first comment naming "${alignment.word.trim()}"`;
  return `${alignmentParameterLabel(alignment.parameter)} ${alignment.direction === 'up' ? 'rising above' : 'falling below'} ${alignment.value}`;
}
