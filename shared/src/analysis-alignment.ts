/**
 * Wire contract of the time zeros of unit operations: Compare runs draws each run at elapsed time since
 * its own time zero (the start, the first comment naming a word, or a threshold crossing), the same
 * alignment Analyze builds its envelopes on.
 */
import { z } from 'zod';
import { entityIdSchema } from './entities.ts';
import { alignedUnitOperationSchema, alignmentSchema, instrumentOverrideSchema, leftOutSchema, MAX_REFERENCE_UNIT_OPERATIONS } from './analysis.ts';

export const ALIGNMENT_MESSAGES = {
  noUnitOperations: 'At least one unit operation is needed.',
  tooManyUnitOperations: `At most ${MAX_REFERENCE_UNIT_OPERATIONS} unit operations can be aligned at once.`,
} as const;

export const alignmentRequestSchema = z.object({
  unit_operation_ids: z.array(entityIdSchema)
    .min(1, ALIGNMENT_MESSAGES.noUnitOperations).max(MAX_REFERENCE_UNIT_OPERATIONS, ALIGNMENT_MESSAGES.tooManyUnitOperations),
  alignment: alignmentSchema,
  /** An explicit instrument for a unit operation replaces the one its equipment gives for that type (threshold alignment). */
  instrument_overrides: z.array(instrumentOverrideSchema).max(2_000).default([]),
}).strict();
export type AlignmentRequest = z.infer<typeof alignmentRequestSchema>;

/** A unit operation and the instant its elapsed time 0 stands for (ISO 8601). */
export const timeZeroSchema = alignedUnitOperationSchema.omit({ instrument_id: true });
export type TimeZero = z.infer<typeof timeZeroSchema>;

export const alignmentResultSchema = z.object({
  alignment: alignmentSchema,
  /** In the order asked; a unit operation without its event is in left_out instead. */
  aligned: z.array(timeZeroSchema),
  left_out: z.array(leftOutSchema),
});
export type AlignmentResult = z.infer<typeof alignmentResultSchema>;
