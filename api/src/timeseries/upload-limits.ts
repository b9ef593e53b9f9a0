/**
 * Limits on CSV uploads, per organisation (every user and API key of it together, so a new key buys
 * no more): uploads started per minute (UPLOAD_RATE_LIMIT_PER_MINUTE), uploads in flight
 * (UPLOADS_IN_FLIGHT_PER_ORGANIZATION) and bytes on the spool disk in flight
 * (UPLOAD_SPOOL_BYTES_PER_ORGANIZATION). In flight means being received by an api process, or spooled
 * and waiting for (or being read by) the ingest-worker, which deletes the file when it is done.
 *
 * Uploads being received are kept in Redis, shared by every api process: a sorted set of upload ids
 * scored by the time by which the request must have arrived (REQUEST_TIMEOUT_MS), so an api process
 * that dies mid-upload leaves nothing behind for longer than that, and a hash of the bytes each has
 * spooled so far. Uploads already spooled are the organisation's queued and running CSV jobs in
 * PostgreSQL. Every answer is a 429 with the upload-limit message. While Redis does not answer, each
 * process counts on its own (see admitOffline) rather than refusing: the job is recorded in PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { TIME_SERIES_MESSAGES } from '@bioprocess/shared/timeseries';
import { unfinishedUploads } from '@bioprocess/shared/server/ingest-jobs';
import type { AppDeps } from '../platform/deps.ts';
import { HttpError } from '../platform/http-error.ts';

/** Spooled bytes are reported to Redis in steps of this size, not for every chunk. */
const REPORT_STEP_BYTES = 1024 * 1024;

/**
 * Admits one more upload being received when the organisation's uploads and spooled bytes stay
 * within the limits. KEYS: receiving set, bytes hash. ARGV: now, deadline, upload id, max uploads,
 * spooled uploads, max bytes, spooled bytes, key lifetime (ms).
 */
const ADMIT_SCRIPT = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(expired) do redis.call('HDEL', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) + tonumber(ARGV[5]) >= tonumber(ARGV[4]) then return 0 end
local bytes = tonumber(ARGV[7])
for _, value in ipairs(redis.call('HVALS', KEYS[2])) do bytes = bytes + tonumber(value) end
if bytes >= tonumber(ARGV[6]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], 0)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return 1`;

/** Adds spooled bytes to an upload; 0 when the organisation is now over its bytes. ARGV: id, bytes, max, spooled bytes. */
const GROW_SCRIPT = `
redis.call('HINCRBY', KEYS[2], ARGV[1], ARGV[2])
local bytes = tonumber(ARGV[4])
for _, value in ipairs(redis.call('HVALS', KEYS[2])) do bytes = bytes + tonumber(value) end
if bytes > tonumber(ARGV[3]) then return 0 end
return 1`;

function limited(deps: AppDeps): HttpError {
  return new HttpError(429, TIME_SERIES_MESSAGES.uploadRateLimited(deps.env.UPLOAD_RATE_LIMIT_PER_MINUTE));
}

/**
 * This process's own counts, used only while Redis does not answer: uploads stay limited (per process
 * then) and are still accepted, since their jobs are recorded in PostgreSQL and delivered once Redis
 * is back.
 */
const offline = {
  perMinute: new Map<string, number>(),
  /** Per organisation: the bytes spooled so far by each upload being received. */
  receiving: new Map<number, Map<string, number>>(),
};

function admitOffline(deps: AppDeps, organizationId: number, minute: number, countMinute: boolean, spooled: { uploads: number; bytes: number }): UploadAdmission {
  const { env } = deps;
  if (countMinute) {
    const key = `${organizationId}:${minute}`;
    for (const old of offline.perMinute.keys()) if (!old.endsWith(`:${minute}`)) offline.perMinute.delete(old);
    const count = (offline.perMinute.get(key) ?? 0) + 1;
    offline.perMinute.set(key, count);
    if (count > env.UPLOAD_RATE_LIMIT_PER_MINUTE) throw limited(deps);
  }
  const receiving = offline.receiving.get(organizationId) ?? new Map<string, number>();
  const receivingBytes = () => [...receiving.values()].reduce((sum, bytes) => sum + bytes, spooled.bytes);
  if (receiving.size + spooled.uploads >= env.UPLOADS_IN_FLIGHT_PER_ORGANIZATION || receivingBytes() >= env.UPLOAD_SPOOL_BYTES_PER_ORGANIZATION) {
    throw limited(deps);
  }
  const uploadId = randomUUID();
  receiving.set(uploadId, 0);
  offline.receiving.set(organizationId, receiving);
  return {
    finish: async () => {
      receiving.delete(uploadId);
      if (receiving.size === 0) offline.receiving.delete(organizationId);
    },
    meter: () => new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        receiving.set(uploadId, (receiving.get(uploadId) ?? 0) + chunk.length);
        if (receivingBytes() > env.UPLOAD_SPOOL_BYTES_PER_ORGANIZATION) return callback(limited(deps));
        callback(null, chunk);
      },
    }),
  };
}

/** One upload while it is received: counts its bytes as they are spooled, then lets go. */
export interface UploadAdmission {
  /** A pass-through stream that counts bytes and fails with a 429 once the organisation is over. */
  meter(): Transform;
  /** Gives the upload's place back (idempotent); the spooled job is counted from PostgreSQL. */
  finish(): Promise<void>;
}

const spooledUploads = (deps: AppDeps, organizationId: number) => unfinishedUploads(deps.pg, organizationId);

/** Counts the upload against its organisation's limits before a byte of it is read; 429 when over. */
export async function admitUpload(deps: AppDeps, organizationId: number): Promise<UploadAdmission> {
  const { env, redis } = deps;
  const prefix = `${env.QUEUE_PREFIX}:uploads:org:${organizationId}`;
  const minute = Math.floor(Date.now() / 60_000);
  let count: number;
  try {
    count = await redis.incr(`${prefix}:per-minute:${minute}`);
    if (count === 1) await redis.expire(`${prefix}:per-minute:${minute}`, 120);
  } catch {
    return admitOffline(deps, organizationId, minute, true, await spooledUploads(deps, organizationId));
  }
  if (count > env.UPLOAD_RATE_LIMIT_PER_MINUTE) throw limited(deps);

  const spooled = await spooledUploads(deps, organizationId);
  const receivingKey = `${prefix}:receiving`;
  const bytesKey = `${prefix}:receiving-bytes`;
  const uploadId = randomUUID();
  // A request must have arrived by then (else Node answers 408), so its entry is stale afterwards.
  const lifetimeMs = env.REQUEST_TIMEOUT_MS + 60_000;
  const now = Date.now();
  let admitted: unknown;
  try {
    admitted = await redis.eval(ADMIT_SCRIPT, 2, receivingKey, bytesKey,
      now, now + lifetimeMs, uploadId, env.UPLOADS_IN_FLIGHT_PER_ORGANIZATION, spooled.uploads,
      env.UPLOAD_SPOOL_BYTES_PER_ORGANIZATION, spooled.bytes, lifetimeMs);
  } catch {
    return admitOffline(deps, organizationId, minute, false, spooled);
  }
  if (admitted !== 1) throw limited(deps);

  let finished = false;
  const finish = async () => {
    if (finished) return;
    finished = true;
    await redis.multi().zrem(receivingKey, uploadId).hdel(bytesKey, uploadId).exec().catch(() => undefined);
  };
  const report = async (bytes: number): Promise<void> => {
    let within: unknown;
    try {
      within = await redis.eval(GROW_SCRIPT, 2, receivingKey, bytesKey, uploadId, bytes, env.UPLOAD_SPOOL_BYTES_PER_ORGANIZATION, spooled.bytes);
    } catch {
      // Redis left mid-upload: the bytes admitted when it answered stay the bound.
      return;
    }
    if (within !== 1) throw limited(deps);
  };
  return {
    finish,
    meter() {
      let unreported = 0;
      return new Transform({
        transform(chunk: Buffer, _encoding, callback: TransformCallback) {
          unreported += chunk.length;
          if (unreported < REPORT_STEP_BYTES) return callback(null, chunk);
          const bytes = unreported;
          unreported = 0;
          report(bytes).then(() => callback(null, chunk), (error: unknown) => callback(error as Error));
        },
        flush(callback: TransformCallback) {
          if (unreported === 0) return callback();
          report(unreported).then(() => callback(), (error: unknown) => callback(error as Error));
        },
      });
    },
  };
}
