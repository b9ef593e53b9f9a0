/** Alert firings as bands of a unit operation's chart: minutes since its start, from the condition's start to its end. */
import type { ChartAlertBand } from '../charts/alert-bands.ts';
import type { AlertEventView } from './alert-queries.ts';

export function alertBandsOf(events: readonly AlertEventView[] | undefined, startMs: number | null): ChartAlertBand[] {
  if (!events || startMs === null) return [];
  return events.map((event) => ({
    id: event.id,
    fromMinute: (Date.parse(event.startedAt) - startMs) / 60_000,
    toMinute: event.resolvedAt === null ? null : (Date.parse(event.resolvedAt) - startMs) / 60_000,
    label: event.ruleName,
    firing: event.state === 'firing',
  }));
}
