/**
 * The state machine of one rule on one series, as readings arrive in time order: ok -> pending when a
 * reading meets the condition, pending -> firing once it held for the hold time (in the readings' own
 * time, so a replay gives the same answer), back to ok at the first reading that does not meet it.
 * Pure: the evaluator loads and locks the state, applies readings here, and stores what comes out.
 */
import type { AlertCondition, AlertState } from '@bioprocess/shared/alerts';

export interface SeriesState {
  state: AlertState;
  /** When the condition began to hold (pending or firing). */
  sinceMs: number | null;
  /** The newest reading applied: older ones arriving late do not move the state back. */
  lastPointMs: number | null;
}

/** A reading judged against the condition: `meets` null when it cannot be judged (no band there). */
export interface Judged {
  ts: number;
  value: number;
  meets: boolean | null;
}

export type Transition =
  | { kind: 'fire'; startedMs: number; firedMs: number; value: number }
  | { kind: 'resolve'; resolvedMs: number; value: number };

export function holdMsOf(condition: AlertCondition): number {
  return condition.kind === 'no_data' ? 0 : condition.hold_seconds * 1000;
}

/** Applies readings (any order; those not newer than the state's last are skipped) and lists the transitions. */
export function advance(current: SeriesState, readings: readonly Judged[], holdMs: number): { next: SeriesState; transitions: Transition[] } {
  const next: SeriesState = { ...current };
  const transitions: Transition[] = [];
  const ordered = [...readings].sort((a, b) => a.ts - b.ts);
  for (const reading of ordered) {
    if (next.lastPointMs !== null && reading.ts <= next.lastPointMs) continue;
    next.lastPointMs = reading.ts;
    if (reading.meets === null) continue;
    if (reading.meets) {
      if (next.state === 'ok') {
        next.state = 'pending';
        next.sinceMs = reading.ts;
      }
      if (next.state === 'pending' && reading.ts - next.sinceMs! >= holdMs) {
        next.state = 'firing';
        transitions.push({ kind: 'fire', startedMs: next.sinceMs!, firedMs: reading.ts, value: reading.value });
      }
    } else {
      if (next.state === 'firing') transitions.push({ kind: 'resolve', resolvedMs: reading.ts, value: reading.value });
      next.state = 'ok';
      next.sinceMs = null;
    }
  }
  return { next, transitions };
}

/** Whether a reading meets a threshold. */
export function meetsThreshold(condition: Extract<AlertCondition, { kind: 'threshold' }>, value: number): boolean {
  return condition.direction === 'above' ? value > condition.value : value < condition.value;
}

/**
 * Each reading's rate of change per minute: from the earliest reading within the window before it.
 * `readings` holds the window before the first new reading too (the evaluator reads it), sorted by time.
 * A reading with no earlier one in its window cannot be judged.
 */
export function judgeRates(
  condition: Extract<AlertCondition, { kind: 'rate_of_change' }>, readings: ReadonlyArray<{ ts: number; value: number }>,
): Judged[] {
  const windowMs = condition.window_seconds * 1000;
  const judged: Judged[] = [];
  let first = 0;
  for (let at = 0; at < readings.length; at += 1) {
    const reading = readings[at]!;
    while (first < at && readings[first]!.ts < reading.ts - windowMs) first += 1;
    if (first === at) {
      judged.push({ ts: reading.ts, value: reading.value, meets: null });
      continue;
    }
    const earliest = readings[first]!;
    const perMinute = ((reading.value - earliest.value) / (reading.ts - earliest.ts)) * 60_000;
    const meets = condition.direction === 'rising' ? perMinute > condition.per_minute
      : condition.direction === 'falling' ? -perMinute > condition.per_minute
        : Math.abs(perMinute) > condition.per_minute;
    judged.push({ ts: reading.ts, value: perMinute, meets });
  }
  return judged;
}

/** A sentence for the event list, the email and the webhook. */
export function describeFiring(condition: AlertCondition, instrumentName: string, value: number | null): string {
  const shown = value === null ? '' : ` (${Number(value.toPrecision(6))})`;
  switch (condition.kind) {
    case 'threshold':
      return `${instrumentName} ${condition.direction} ${condition.value}${shown}`;
    case 'rate_of_change':
      return `${instrumentName} ${condition.direction === 'either' ? 'changing' : condition.direction} faster than ${condition.per_minute} per minute${shown}`;
    case 'no_data':
      return `${instrumentName}: no reading for ${condition.period_seconds} s`;
    case 'golden_band':
      return `${instrumentName} outside the golden-batch band${shown}`;
  }
}
