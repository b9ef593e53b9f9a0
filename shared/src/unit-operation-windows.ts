/**
 * The window of a unit operation and the one-at-a-time rule of its equipment. A unit operation owns
 * the readings of its equipment's instruments inside its window: from its start to its end, or, when
 * it has no end, until now (a start in the future and no end: the start alone). Without a start it
 * has no window and owns no readings. Windows are closed intervals of epoch milliseconds, so two
 * windows that share an instant overlap: a reading at that instant would belong to both.
 */
import { z } from 'zod';

export interface TimeWindow {
  startMs: number;
  endMs: number;
}

/** The window a unit operation owns at `nowMs`, or null without a start. */
export function effectiveWindow(startMs: number | null, endMs: number | null, nowMs: number): TimeWindow | null {
  if (startMs === null) return null;
  return { startMs, endMs: endMs ?? Math.max(nowMs, startMs) };
}

export function windowsOverlap(a: TimeWindow, b: TimeWindow): boolean {
  return a.startMs <= b.endMs && b.startMs <= a.endMs;
}

/** The parts of `window` that none of `others` covers (readings are whole milliseconds). */
export function subtractWindows(window: TimeWindow, others: readonly TimeWindow[]): TimeWindow[] {
  let parts: TimeWindow[] = [window];
  for (const other of others) {
    parts = parts.flatMap((part) => {
      if (!windowsOverlap(part, other)) return [part];
      const left = other.startMs > part.startMs ? [{ startMs: part.startMs, endMs: other.startMs - 1 }] : [];
      const right = other.endMs < part.endMs ? [{ startMs: other.endMs + 1, endMs: part.endMs }] : [];
      return [...left, ...right];
    });
  }
  return parts;
}

export interface ConflictingUnitOperation {
  id: number;
  type: string;
  runName: string;
  startMs: number;
  endMs: number | null;
}

function typeLabel(type: string): string {
  const words = type.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The 409 message: names the unit operation already on the equipment and its window. */
export function overlapMessage(other: ConflictingUnitOperation): string {
  const end = other.endMs === null ? 'open-ended, running until now' : new Date(other.endMs).toISOString();
  return `The equipment is in use by unit operation ${other.id} (${typeLabel(other.type)} of run '${other.runName}') `
    + `from ${new Date(other.startMs).toISOString()} to ${end}; one piece of equipment runs one unit operation at a time.`;
}

export const UNIT_OPERATION_WINDOW_MESSAGES = {
  overlapsOnUpload: (message: string) => `The file's time range overlaps another unit operation: ${message}`,
  unitOperationGone: 'The unit operation was deleted while its file was read.',
} as const;

/** `?instrument_ids=1,2,3`: only these instruments (what an upload replacing their readings removes). */
export const deletionPreviewQuerySchema = z.object({
  instrument_ids: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'instrument_ids must be a comma-separated list of ids')
    .transform((text) => [...new Set(text.split(',').map(Number))])
    .optional(),
});

export const deletionPreviewSchema = z.object({
  unit_operation_id: z.number(),
  /** The parts of the unit operation's window its deletion clears (empty without a start). */
  ranges: z.array(z.object({ start_time: z.string(), end_time: z.string() })),
  instruments: z.array(z.object({ instrument_id: z.number(), name: z.string(), readings: z.number() })),
  total_readings: z.number(),
});
export type DeletionPreview = z.infer<typeof deletionPreviewSchema>;
