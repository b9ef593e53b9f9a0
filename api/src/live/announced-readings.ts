/**
 * The stored points of announced writes, as reads see them now (the one read rule: points-read.ts),
 * so a live event carries them and the client draws them without a fetch. One statement per
 * organisation for a whole batch of announcements; writes too large to carry get none (the client
 * reads their range itself).
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { PointsStoredAnnouncement } from '@bioprocess/shared/server/points-stored';
import type { LiveReading } from '@bioprocess/shared/live';
import { dedupedPoints, queryRows, type PointWindow } from '../timeseries/points-read.ts';

/** Points one statement reads at most (the batch's carried writes together). */
const POINTS_PER_STATEMENT = 100_000;

/** Per announcement id, its readings; absent: too large to carry (or not asked for). */
export type CarriedReadings = Map<string, LiveReading[]>;

/** Whether an announcement's points travel with its event. */
export function carriesReadings(entry: PointsStoredAnnouncement, inlinePoints: number): boolean {
  return entry.kind === 'points' && entry.points !== undefined && entry.points <= inlinePoints;
}

/**
 * The readings of each carried announcement, restricted to `instrumentsOf(entry)` (the instruments
 * someone follows). Announcements of one organisation are read together.
 */
export async function readAnnouncedReadings(
  clickhouse: ClickHouseClient,
  entries: readonly PointsStoredAnnouncement[],
  inlinePoints: number,
  instrumentsOf: (entry: PointsStoredAnnouncement) => readonly number[],
): Promise<CarriedReadings> {
  const byOrganization = new Map<number, Array<{ entry: PointsStoredAnnouncement; instrumentIds: readonly number[] }>>();
  let budget = POINTS_PER_STATEMENT;
  for (const entry of entries) {
    if (!carriesReadings(entry, inlinePoints)) continue;
    const instrumentIds = instrumentsOf(entry);
    if (instrumentIds.length === 0) continue;
    // Past the budget, the rest are left for their clients to read.
    if (entry.points! > budget) continue;
    budget -= entry.points!;
    const list = byOrganization.get(entry.organizationId) ?? [];
    list.push({ entry, instrumentIds });
    byOrganization.set(entry.organizationId, list);
  }
  const carried: CarriedReadings = new Map();
  await Promise.all([...byOrganization].map(async ([organizationId, wanted]) => {
    const windows: PointWindow[] = wanted.map(({ entry, instrumentIds }) => ({ instrumentIds, from: entry.fromMs, to: entry.toMs }));
    const rows = await queryRows<[string | number, string | number, number | null]>(clickhouse,
      `SELECT instrument_id, ts, v FROM (${dedupedPoints(organizationId, windows)}) WHERE d = 0 ORDER BY instrument_id, ts`);
    const byInstrument = new Map<number, LiveReading[]>();
    for (const [instrument, ts, value] of rows) {
      const instrumentId = Number(instrument);
      const list = byInstrument.get(instrumentId) ?? [];
      list.push({ instrument_id: instrumentId, ts: Number(ts), value });
      byInstrument.set(instrumentId, list);
    }
    for (const { entry, instrumentIds } of wanted) {
      const readings: LiveReading[] = [];
      for (const instrumentId of instrumentIds) {
        const list = byInstrument.get(instrumentId);
        if (!list) continue;
        for (let at = firstAtOrAfter(list, entry.fromMs); at < list.length && list[at]!.ts <= entry.toMs; at += 1) readings.push(list[at]!);
      }
      carried.set(entry.id, readings);
    }
  }));
  return carried;
}

function firstAtOrAfter(list: readonly LiveReading[], ms: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (list[middle]!.ts < ms) low = middle + 1;
    else high = middle;
  }
  return low;
}
