/** Run and unit-operation status, derived from times and never stored. */
import type { RunStatus } from './enums.ts';

export function deriveStatus(
  startTime: string | Date | null | undefined,
  endTime: string | Date | null | undefined,
  now: Date = new Date(),
): RunStatus {
  const start = startTime ? new Date(startTime).getTime() : NaN;
  if (Number.isNaN(start) || start > now.getTime()) return 'Pending';
  const end = endTime ? new Date(endTime).getTime() : NaN;
  if (!Number.isNaN(end) && end <= now.getTime()) return 'Completed';
  return 'Active';
}
