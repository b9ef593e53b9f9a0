/**
 * The live endpoint's wire contract (docs/live.md): the query that opens a stream and the events it
 * carries. The api writes these, the console reads them with the same schemas.
 */
import { z } from 'zod';

export const LIVE_PATH = '/api/v1/live';

export const LIVE_MESSAGES = {
  instrumentsNotFound: (ids: readonly number[]) => `instrument_ids: instrument${ids.length === 1 ? '' : 's'} not found: ${ids.join(', ')}`,
  tooManyInstruments: (limit: number) => `instrument_ids: a live stream follows at most ${limit} instruments; open charts with fewer parameters.`,
  tooManyConnections: (limit: number) =>
    `Your organisation already has ${limit} live chart connections open; close a browser tab showing charts and try again.`,
  badLastEventId: 'Last-Event-ID: expected an event id this stream sent (<milliseconds>-<sequence>)',
  unavailable: 'Live updates are unavailable for a moment; the chart shows what was stored and will reconnect.',
} as const;

/** `instrument_ids=1,2,3`: the instruments the stream follows (none: only position events). */
export const liveQuerySchema = z.object({
  instrument_ids: z.string().max(20_000).optional().transform((text, context) => {
    if (text === undefined || text.trim() === '') return [] as number[];
    const parts = text.split(',').map((part) => part.trim());
    const bad = parts.findIndex((part) => !/^[1-9]\d{0,14}$/.test(part));
    if (bad >= 0) {
      context.addIssue({ code: 'custom', message: `instrument_ids.${bad}: expected a positive integer instrument id` });
      return z.NEVER;
    }
    return [...new Set(parts.map(Number))];
  }).describe('Comma-separated ids of the instruments the open charts draw'),
});

/** One reading carried by an event: epoch milliseconds and its stored value (null: stored empty). */
export const liveReadingSchema = z.object({
  instrument_id: z.number().int().positive(),
  ts: z.number().int(),
  value: z.number().nullable(),
});
export type LiveReading = z.infer<typeof liveReadingSchema>;

/** `event: ready`: the stream follows these instruments from the event id it carries on. */
export const liveReadySchema = z.object({
  connection_id: z.string(),
  instrument_ids: z.array(z.number().int().positive()),
  /** Whether the stream resumed after the client's Last-Event-ID (the events missed came before this one). */
  resumed: z.boolean(),
});

/**
 * `event: points`: points were stored (new, late or replacing others) in the range for these
 * instruments (those the stream follows). `readings` are the range's stored points as reads now see
 * them; null when the write was too large to carry, and the client reads the range itself.
 */
export const livePointsSchema = z.object({
  instrument_ids: z.array(z.number().int().positive()),
  from_ms: z.number().int(),
  to_ms: z.number().int(),
  readings: z.array(liveReadingSchema).nullable(),
});

/** `event: deletion`: the range's points of these instruments were removed. */
export const liveDeletionSchema = z.object({
  instrument_ids: z.array(z.number().int().positive()),
  from_ms: z.number().int(),
  to_ms: z.number().int(),
});

/** `event: reset`: events were lost (a resume point too old, Redis lost its stream): read the windows again. */
export const liveResetSchema = z.object({ reason: z.string() });

/** `event: end`: the stream ends (its time is up or the server stops); reconnect with Last-Event-ID. */
export const liveEndSchema = z.object({ reason: z.string() });

export type LiveReady = z.infer<typeof liveReadySchema>;
export type LivePoints = z.infer<typeof livePointsSchema>;
export type LiveDeletion = z.infer<typeof liveDeletionSchema>;
