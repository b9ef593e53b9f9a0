/**
 * The caps of one read of readings (shared/src/timeseries.ts READ_MAX_*), checked before anything is
 * read from ClickHouse: a read past one answers 400 naming it, so no request can make the api read,
 * hold or send more than the caps allow, whoever sends it.
 */
import { READ_CAP_MESSAGES, READ_MAX_INSTRUMENTS, READ_MAX_POINTS } from '@bioprocess/shared/timeseries';
import { badRequest } from '../platform/http-error.ts';

/** `hint` tells the client how to cover fewer instruments on this endpoint. */
export function requireWithinReadCaps(read: { instruments: number; limit: number }, hint: string): void {
  if (read.instruments > READ_MAX_INSTRUMENTS) throw badRequest(READ_CAP_MESSAGES.instruments(read.instruments, hint));
  if (read.instruments * read.limit > READ_MAX_POINTS) throw badRequest(READ_CAP_MESSAGES.points(read.instruments, read.limit));
}
