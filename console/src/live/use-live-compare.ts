/**
 * Compare's live drawing: the readings of the selected runs' operations that are still running are
 * patched as they are stored (by instrument and time, within each operation's window); a write too
 * large for an event, or events missed, read the series again.
 */
import type { KeyedMutator } from 'swr';
import { useMemo } from 'react';
import type { LiveReading } from '@bioprocess/shared/live';
import type { Reading } from '../charts/series-model.ts';
import { toEpochMs } from '../charts/time-axis.ts';
import type { LiveState } from './live-client.ts';
import { patchReadings, removeReadings } from './live-series.ts';
import { useLiveSubscription } from './use-live-subscription.ts';

interface Operation {
  id: number;
  equipmentId: number | null;
  startTime: string | null;
  endTime: string | null;
}

/** Whether an operation is still running (no end, or an end still to come). */
export function isRunning(operation: Pick<Operation, 'endTime'>, nowMs: number = Date.now()): boolean {
  return !operation.endTime || toEpochMs(operation.endTime) > nowMs;
}

/** The live readings that belong to an operation: its equipment's instruments, within its window. */
function readingsOf(operation: Operation, instrumentsOfEquipment: ReadonlySet<number>, readings: readonly LiveReading[]): LiveReading[] {
  const startMs = operation.startTime ? toEpochMs(operation.startTime) : Number.NEGATIVE_INFINITY;
  const endMs = operation.endTime ? toEpochMs(operation.endTime) : Number.POSITIVE_INFINITY;
  return readings.filter((reading) => instrumentsOfEquipment.has(reading.instrument_id) && reading.ts >= startMs && reading.ts <= endMs);
}

/** Follows the running operations' instruments; the connection's state, or null when none is running. */
export function useLiveCompareSeries(
  operations: readonly Operation[],
  instruments: ReadonlyArray<{ id: number; equipmentId: number }> | undefined,
  mutate: KeyedMutator<Map<number, Reading[]>>,
): LiveState | null {
  const running = useMemo(() => operations.filter((operation) => isRunning(operation)), [operations]);
  const byEquipment = useMemo(() => {
    const map = new Map<number, Set<number>>();
    for (const instrument of instruments ?? []) {
      const set = map.get(instrument.equipmentId) ?? new Set<number>();
      set.add(instrument.id);
      map.set(instrument.equipmentId, set);
    }
    return map;
  }, [instruments]);
  const instrumentIds = useMemo(() => [...new Set(running.flatMap((operation) =>
    operation.equipmentId === null ? [] : [...byEquipment.get(operation.equipmentId) ?? []]))].sort((a, b) => a - b), [running, byEquipment]);

  const state = useLiveSubscription(instrumentIds, running.length > 0, {
    onPoints: (event) => {
      if (!event.readings) {
        void mutate();
        return;
      }
      const readings = event.readings;
      void mutate((current) => current && new Map([...current].map(([operationId, list]) => {
        const operation = running.find((candidate) => candidate.id === operationId);
        const own = operation && operation.equipmentId !== null ? readingsOf(operation, byEquipment.get(operation.equipmentId) ?? new Set(), readings) : [];
        return [operationId, own.length > 0 ? patchReadings(list, own) : list];
      })), { revalidate: false });
    },
    onDeletion: (event) => {
      void mutate((current) => current && new Map([...current].map(([operationId, list]) =>
        [operationId, removeReadings(list, event.instrument_ids, event.from_ms, event.to_ms)])), { revalidate: false });
    },
    onResync: () => { void mutate(); },
  });
  return running.length > 0 && instrumentIds.length > 0 ? state : null;
}
