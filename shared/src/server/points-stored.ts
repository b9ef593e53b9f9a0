/**
 * The announcement that stored points changed: the ingest-worker appends one entry to a Redis Stream
 * after every write that changed stored points (a bulk post, a CSV upload, a range deletion) once reads
 * see it; api processes read the stream (live charts, alert evaluation). Producer and consumers share
 * this module: the stream's key, its bound, the entry's fields and how a resume point is judged.
 *
 * The stream only delivers: Redis may lose it (a restart without persistence), and a consumer that
 * finds its resume point no longer covered is told to start over from the stored points (`reset`).
 * An entry's stream id is its identity for consumers (the live endpoint's SSE event id).
 */
import { z } from 'zod';
import type { Redis } from './redis.ts';
import type { Logger } from './logger.ts';

/** The stream's key under the queue prefix. */
export const POINTS_STORED_STREAM = (prefix: string): string => `${prefix}:points-stored`;

/**
 * Entries kept (approximately: MAXLEN ~ trims whole nodes). At a few hundred posts a second this is
 * a minute or more of history, enough for a reconnect after a network blip; older resume points get a
 * reset, which costs the client one fetch of its window.
 */
export const POINTS_STORED_MAX_ENTRIES = 20_000;

export const pointsStoredKindSchema = z.enum(['points', 'deletion']);
export type PointsStoredKind = z.infer<typeof pointsStoredKindSchema>;

export interface PointsStoredEntry {
  organizationId: number;
  instrumentIds: readonly number[];
  /** The range written, epoch ms, inclusive. */
  fromMs: number;
  toMs: number;
  /** Points written (late or replaced ones included) or a range whose points were removed. */
  kind: PointsStoredKind;
  jobIds: readonly string[];
  /** Points the write stored (or removed), when known: consumers decide by it whether to read them. */
  points?: number;
}

export interface PointsStoredAnnouncement extends PointsStoredEntry {
  /** The stream id (`<ms>-<seq>`). */
  id: string;
}

const idList = z.string().transform((text, context) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    context.addIssue({ code: 'custom', message: 'not JSON' });
    return z.NEVER;
  }
});

const entryFieldsSchema = z.object({
  organization_id: z.coerce.number().int().positive(),
  instrument_ids: idList.pipe(z.array(z.number().int().positive())),
  from_ms: z.coerce.number().int(),
  to_ms: z.coerce.number().int(),
  kind: pointsStoredKindSchema,
  job_ids: idList.pipe(z.array(z.string())),
  points: z.coerce.number().int().nonnegative().optional(),
});

const STREAM_ID = /^\d+-\d+$/;

/** Whether text is a stream id (as a Last-Event-ID must be). */
export function isStreamId(text: string): boolean {
  return STREAM_ID.test(text);
}

/** Orders two stream ids. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bMs, bSeq] = b.split('-').map(BigInt) as [bigint, bigint];
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}

/**
 * Appends an entry. A failure (Redis down) is logged and answers null, never thrown: the write it
 * announces is durable and its job must not fail for it; live viewers refetch on reconnect anyway.
 * The command gives up after `timeoutMs` so a job never waits on a Redis outage.
 */
export async function announcePointsStored(redis: Redis, prefix: string, entry: PointsStoredEntry, logger?: Logger, timeoutMs = 2_000): Promise<string | null> {
  if (entry.instrumentIds.length === 0) return null;
  try {
    return await withTimeout(redis.xadd(POINTS_STORED_STREAM(prefix), 'MAXLEN', '~', POINTS_STORED_MAX_ENTRIES, '*', ...entryFields(entry)), timeoutMs);
  } catch (error) {
    logger?.warn({ err: error, organizationId: entry.organizationId, jobIds: entry.jobIds }, 'points-stored announcement lost');
    return null;
  }
}

/**
 * Announces several writes in one round trip (posts completed together), each its own entry, in order.
 * Failures are logged, never thrown, as for announcePointsStored.
 */
export async function announceAllPointsStored(redis: Redis, prefix: string, entries: readonly PointsStoredEntry[], logger?: Logger, timeoutMs = 2_000): Promise<void> {
  const announced = entries.filter((entry) => entry.instrumentIds.length > 0);
  if (announced.length === 0) return;
  if (announced.length === 1) {
    await announcePointsStored(redis, prefix, announced[0]!, logger, timeoutMs);
    return;
  }
  const pipeline = redis.pipeline();
  for (const entry of announced) pipeline.xadd(POINTS_STORED_STREAM(prefix), 'MAXLEN', '~', POINTS_STORED_MAX_ENTRIES, '*', ...entryFields(entry));
  await withTimeout(pipeline.exec(), timeoutMs).then((results) => {
    const failed = (results ?? []).find(([error]) => error);
    if (failed) throw failed[0];
  }).catch((error: unknown) => {
    logger?.warn({ err: error, entries: announced.length, jobIds: announced.flatMap((entry) => entry.jobIds) }, 'points-stored announcements lost');
  });
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from Redis within ${timeoutMs} ms`)), timeoutMs);
    })]);
  } finally {
    clearTimeout(timer);
  }
}

function entryFields(entry: PointsStoredEntry): string[] {
  return [
    'organization_id', String(entry.organizationId),
    'instrument_ids', JSON.stringify(entry.instrumentIds),
    'from_ms', String(entry.fromMs),
    'to_ms', String(entry.toMs),
    'kind', entry.kind,
    'job_ids', JSON.stringify(entry.jobIds),
    ...(entry.points === undefined ? [] : ['points', String(entry.points)]),
  ];
}

function parseEntry(id: string, flat: readonly string[]): PointsStoredAnnouncement | null {
  const record: Record<string, string> = {};
  for (let at = 0; at + 1 < flat.length; at += 2) record[flat[at]!] = flat[at + 1]!;
  const parsed = entryFieldsSchema.safeParse(record);
  if (!parsed.success) return null;
  const fields = parsed.data;
  return {
    id,
    organizationId: fields.organization_id,
    instrumentIds: fields.instrument_ids,
    fromMs: fields.from_ms,
    toMs: fields.to_ms,
    kind: fields.kind,
    jobIds: fields.job_ids,
    ...(fields.points === undefined ? {} : { points: fields.points }),
  };
}

type RawEntries = Array<[string, string[]]>;

/**
 * Entries as a consumer group answers them (XREADGROUP, XAUTOCLAIM), parsed like those of XREAD; an
 * entry trimmed while pending arrives without fields and is left out (its id is still the caller's to ack).
 */
export function parsePointsStoredEntries(raw: ReadonlyArray<[string, string[] | null]>): PointsStoredAnnouncement[] {
  return parseEntries(raw.filter((entry): entry is [string, string[]] => Array.isArray(entry[1])));
}

function parseEntries(raw: RawEntries): PointsStoredAnnouncement[] {
  const entries: PointsStoredAnnouncement[] = [];
  // An entry that does not parse (written by a newer or broken producer) is skipped, not fatal.
  for (const [id, flat] of raw) {
    const entry = parseEntry(id, flat);
    if (entry) entries.push(entry);
  }
  return entries;
}

/**
 * Entries after `afterId` (exclusive; `$` for only those appended from now on), at most `count`,
 * blocking up to `blockMs` when there are none (0: answer at once). Use a Redis connection of its own
 * when blocking: XREAD BLOCK holds the connection.
 */
export async function readPointsStored(
  redis: Redis, prefix: string, afterId: string, options: { count?: number; blockMs?: number } = {},
): Promise<PointsStoredAnnouncement[]> {
  const count = options.count ?? 500;
  const key = POINTS_STORED_STREAM(prefix);
  const raw = options.blockMs !== undefined && options.blockMs > 0
    ? await redis.xread('COUNT', count, 'BLOCK', options.blockMs, 'STREAMS', key, afterId)
    : await redis.xread('COUNT', count, 'STREAMS', key, afterId);
  if (!raw || raw.length === 0) return [];
  return parseEntries(raw[0]![1] as RawEntries);
}

/** Entries after `afterId` up to and including `untilId`, in order (a resumed consumer's gap). */
export async function readPointsStoredBetween(redis: Redis, prefix: string, afterId: string, untilId: string, count = 10_000): Promise<PointsStoredAnnouncement[]> {
  if (compareStreamIds(afterId, untilId) >= 0) return [];
  const raw = await redis.xrange(POINTS_STORED_STREAM(prefix), `(${afterId}`, untilId, 'COUNT', count) as RawEntries;
  return parseEntries(raw);
}

/** The id of the last entry appended, or `0-0` when the stream has none (or does not exist). */
export async function lastPointsStoredId(redis: Redis, prefix: string): Promise<string> {
  const raw = await redis.xrevrange(POINTS_STORED_STREAM(prefix), '+', '-', 'COUNT', 1) as RawEntries;
  return raw[0]?.[0] ?? '0-0';
}

/**
 * Whether the stream still holds every entry after `afterId`: false when entries after it were trimmed,
 * or when the stream is not the one the id came from (Redis lost it and it started again). A consumer
 * resuming from an uncovered id must start over from the stored points.
 */
export async function pointsStoredCovers(redis: Redis, prefix: string, afterId: string): Promise<boolean> {
  let info: unknown[];
  try {
    info = await redis.call('XINFO', 'STREAM', POINTS_STORED_STREAM(prefix)) as unknown[];
  } catch {
    // No stream at all: whatever came after the id is gone with it.
    return false;
  }
  const field = (name: string): unknown => {
    const at = info.indexOf(name);
    return at >= 0 ? info[at + 1] : undefined;
  };
  const lastGenerated = String(field('last-generated-id') ?? '0-0');
  // An id from the future of this stream: it came from an earlier one.
  if (compareStreamIds(afterId, lastGenerated) > 0) return false;
  const first = field('first-entry') as [string, string[]] | null | undefined;
  if (!first) {
    // Empty: covered only when nothing was appended after the id.
    return compareStreamIds(afterId, lastGenerated) === 0;
  }
  // Older than every entry kept: entries after it may have been trimmed (Redis does not record up to
  // where a MAXLEN trim went), or it never was in this stream. Either way the consumer starts over.
  return compareStreamIds(afterId, first[0]) >= 0;
}
