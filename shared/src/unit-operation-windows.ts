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

const timestampParam = (name: string) => z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), { error: `${name} must be an ISO 8601 date and time` });

/**
 * `GET /api/v1/unit-operations/window-check`: would an upload whose readings span first..last fit on
 * the equipment? For an existing unit operation (unit_operation_id) its own times apply; for one not
 * yet created, equipment_id with the form's start_time and end_time. close_open_end as in the mapping.
 */
export const windowCheckQuerySchema = z
  .object({
    unit_operation_id: z.coerce.number().int().positive().optional(),
    equipment_id: z.coerce.number().int().positive().optional(),
    start_time: timestampParam('start_time').optional(),
    end_time: timestampParam('end_time').optional(),
    first_reading: timestampParam('first_reading'),
    last_reading: timestampParam('last_reading'),
    close_open_end: z.enum(['true', 'false']).default('true'),
  })
  .refine((query) => query.unit_operation_id !== undefined || query.equipment_id !== undefined, {
    error: 'unit_operation_id or equipment_id is required',
  })
  .refine((query) => Date.parse(query.first_reading) <= Date.parse(query.last_reading), {
    error: 'last_reading must not be before first_reading', path: ['last_reading'],
  });

export const windowCheckSchema = z.object({
  /** The window the unit operation would hold after the upload (end null: still open, running until now). */
  window: z.object({ start_time: z.string(), end_time: z.string().nullable() }),
  /** The unit operation on the same equipment that window overlaps, named in `message`; null when it fits. */
  conflict: z.object({ unit_operation_id: z.number(), message: z.string() }).nullable(),
});
export type WindowCheck = z.infer<typeof windowCheckSchema>;

/** The window an upload leaves: the unit operation's own times, the file's range where it has none. */
export function windowAfterUpload(
  unitOperation: { startMs: number | null; endMs: number | null },
  file: { firstMs: number; lastMs: number },
  closeOpenEnd: boolean,
): { startMs: number; endMs: number | null } {
  if (unitOperation.startMs === null) return { startMs: file.firstMs, endMs: unitOperation.endMs ?? file.lastMs };
  if (unitOperation.endMs !== null) return { startMs: unitOperation.startMs, endMs: unitOperation.endMs };
  return { startMs: unitOperation.startMs, endMs: closeOpenEnd ? Math.max(file.lastMs, unitOperation.startMs) : null };
}

/** `GET /api/v1/unit-operations/{id}/instruments-with-data`: the instruments holding readings the unit operation owns. */
export const instrumentsWithDataSchema = z.object({
  unit_operation_id: z.number(),
  /** The first and last reading of those instruments in the window (null without readings). */
  first_reading: z.string().nullable(),
  last_reading: z.string().nullable(),
  /** Only instruments with readings, in the equipment's order. */
  instruments: z.array(z.object({ instrument_id: z.number(), name: z.string(), readings: z.number() })),
});
export type InstrumentsWithData = z.infer<typeof instrumentsWithDataSchema>;
