/**
 * Time zones of CSV timestamps. A timestamp without its own offset is a wall-clock time somewhere;
 * the upload names where (an IANA zone such as Europe/Amsterdam, or a fixed offset such as +02:00),
 * and these functions turn such wall-clock times into instants. Browser-safe: the zone rules come from
 * the runtime's Intl data through @date-fns/tz.
 */
import { tzOffset } from '@date-fns/tz';

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

export type ParsedTimeZone =
  | { kind: 'fixed'; offsetMinutes: number; name: string }
  | { kind: 'iana'; name: string };

const FIXED_OFFSET = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const UTC_NAMES = /^(?:UTC|GMT|Z|Etc\/UTC|Etc\/GMT|Etc\/Zulu|Zulu|UCT|Universal|Etc\/Universal)$/i;

/** '+02:00' / '-05:30' / 'UTC' for an offset in minutes. */
export function formatUtcOffset(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'UTC';
  const sign = offsetMinutes < 0 ? '-' : '+';
  const total = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}

/**
 * Reads a zone as the mapping and the organisation setting write it: 'UTC', a fixed offset ('+02:00',
 * '-0530', 'UTC+01:00') or an IANA name the runtime knows (case as the runtime spells it). Null when it
 * is neither.
 */
export function parseTimeZone(text: string): ParsedTimeZone | null {
  const value = text.trim();
  if (value === '' || value.length > 64) return null;
  if (UTC_NAMES.test(value)) return { kind: 'fixed', offsetMinutes: 0, name: 'UTC' };
  const fixed = FIXED_OFFSET.exec(value);
  if (fixed) {
    const hours = Number(fixed[2]);
    const minutes = Number(fixed[3] ?? '0');
    if (hours > 18 || minutes > 59) return null;
    const offsetMinutes = (fixed[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
    return { kind: 'fixed', offsetMinutes, name: formatUtcOffset(offsetMinutes) };
  }
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value)) return null;
  try {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
    return Number.isNaN(tzOffset(name, new Date(0))) ? null : { kind: 'iana', name };
  } catch {
    return null;
  }
}

export function isValidTimeZone(text: string): boolean {
  return parseTimeZone(text) !== null;
}

export const TIME_ZONE_MESSAGE = (zone: string) =>
  `Unknown time zone '${zone}': use an IANA zone name such as Europe/Amsterdam, UTC, or a fixed offset such as +02:00`;

/** How far ahead of UTC the zone's clocks were at an instant, in minutes. */
export function utcOffsetAt(zone: ParsedTimeZone, epochMs: number): number {
  return zone.kind === 'fixed' ? zone.offsetMinutes : tzOffset(zone.name, new Date(epochMs));
}

/**
 * Converts wall-clock times of one zone to instants. Offsets are cached per quarter hour of UTC
 * (zones change offset on quarter hours), so a file of millions of rows asks Intl a few times per
 * hour of data, not once per row.
 */
export class WallClockConverter {
  private readonly cache = new Map<number, number>();

  constructor(readonly zone: ParsedTimeZone) {}

  private offsetAt(epochMs: number): number {
    if (this.zone.kind === 'fixed') return this.zone.offsetMinutes;
    const slot = Math.floor(epochMs / (15 * MS_PER_MINUTE));
    let offset = this.cache.get(slot);
    if (offset === undefined) {
      if (this.cache.size > 20_000) this.cache.clear();
      offset = tzOffset(this.zone.name, new Date(slot * 15 * MS_PER_MINUTE));
      this.cache.set(slot, offset);
    }
    return offset;
  }

  /**
   * The instant of a wall-clock time given as "epoch ms as if the wall clock were UTC". Around a
   * change of offset a wall-clock time can be missing (clocks jump forward: it is read with the offset
   * before the jump, so 02:30 becomes 03:30 of the new offset) or happen twice (clocks go back: the
   * earlier instant, unless that would put it before `previous`, the instant of the file's preceding
   * row, and the later one would not: a log written through the repeated hour keeps its order).
   */
  toInstant(wallMs: number, previous: number = Number.NEGATIVE_INFINITY): number {
    if (this.zone.kind === 'fixed') return wallMs - this.zone.offsetMinutes * MS_PER_MINUTE;
    const before = this.offsetAt(wallMs - MS_PER_DAY);
    const after = this.offsetAt(wallMs + MS_PER_DAY);
    const early = wallMs - before * MS_PER_MINUTE;
    const earlyValid = this.offsetAt(early) === before;
    if (before === after) return earlyValid ? early : wallMs - this.offsetAt(early) * MS_PER_MINUTE;
    const late = wallMs - after * MS_PER_MINUTE;
    const lateValid = this.offsetAt(late) === after;
    if (earlyValid && lateValid) {
      const [first, second] = early <= late ? [early, late] : [late, early];
      return first < previous && second >= previous ? second : first;
    }
    if (earlyValid) return early;
    if (lateValid) return late;
    return early; // inside a jump forward
  }
}
