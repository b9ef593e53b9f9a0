/**
 * A cap on the jobs one organisation has running at once on a BullMQ queue, across every worker process,
 * so that its slow jobs never hold all the slots while another organisation's job waits.
 *
 * What runs is read from BullMQ itself, nothing is counted beside it: an organisation's running jobs are
 * the entries of the queue's active list whose payload names it. So a worker killed mid-job holds its
 * slot only until BullMQ's stall check takes the job back (one lock duration), and a Redis that comes
 * back empty forgets the slots together with the jobs.
 *
 * A job taken while its organisation is at its cap is parked: moved to the delayed set (it keeps its
 * turn, see fair-turns.ts) and named in the organisation's parked list. When one of the organisation's
 * jobs leaves the active list (completed, failed or waiting to be retried), the worker promotes the
 * first parked job, which goes back to the head of the queue. A job is so taken at most twice however
 * long the backlog, and the park's delay (PARK_MS) only matters when the promotion was lost (its worker
 * died in between): the job then comes back by itself.
 */
import type { TurnQueue } from './fair-turns.ts';
import type { Logger } from './logger.ts';

/** How long a parked job waits at most for a promotion before it is taken again. */
export const PARK_MS = 60_000;

/**
 * KEYS[1] the active list (newest first), KEYS[2] the organisation's parked list; ARGV[1] the queue's
 * key prefix, ARGV[2] the job's id, ARGV[3] its organisation, ARGV[4] the cap. Answers 1 when the job may
 * run: fewer than the cap of the organisation's jobs were taken before it and still run. Otherwise names
 * it in the parked list in the same step, so a slot freed meanwhile finds it there.
 */
const TAKE_SCRIPT = `
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local found = false
local ahead = 0
for _, id in ipairs(ids) do
  if found then
    local data = redis.call('HGET', ARGV[1] .. id, 'data')
    if data then
      local ok, payload = pcall(cjson.decode, data)
      if ok and type(payload) == 'table' and tostring(payload['organization_id']) == ARGV[3] then ahead = ahead + 1 end
    end
  elseif id == ARGV[2] then
    found = true
  end
end
if ahead < tonumber(ARGV[4]) then return 1 end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 0
`;

/**
 * KEYS[1] the active list, KEYS[2] the organisation's parked list; ARGV[1] the queue's key prefix,
 * ARGV[2] the organisation, ARGV[3] the cap. When the organisation runs fewer jobs than its cap, answers
 * the first parked job (removed from the list) to promote; otherwise nothing.
 */
const FREE_SCRIPT = `
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local running = 0
for _, id in ipairs(ids) do
  local data = redis.call('HGET', ARGV[1] .. id, 'data')
  if data then
    local ok, payload = pcall(cjson.decode, data)
    if ok and type(payload) == 'table' and tostring(payload['organization_id']) == ARGV[2] then running = running + 1 end
  end
end
if running >= tonumber(ARGV[3]) then return false end
return redis.call('LPOP', KEYS[2])
`;

interface Scripting {
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/** What is used of a BullMQ queue here (a bullmq Queue is one). */
export interface SlotQueue extends TurnQueue {
  getJob(id: string): Promise<{ promote(): Promise<void> } | undefined>;
}

/** What is used of the BullMQ job being taken (a bullmq Job is one). */
export interface TakenJob {
  id?: string;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

export interface OrganizationSlots {
  /**
   * Whether the job, just taken by a worker, may run now. When not, it has been parked: the processor
   * must end at once by throwing bullmq's DelayedError, so that BullMQ leaves it delayed. Should Redis
   * fail the check, the job runs (the cap is about fairness, not correctness); should it fail the
   * park, the error is the job's, as any other Redis failure of its run.
   */
  take(job: TakenJob, token: string | undefined, organizationId: number): Promise<boolean>;
  /** Called once one of the organisation's jobs left the active list: promotes its next parked job, if it now has a slot. */
  freed(organizationId: number): Promise<void>;
}

/** Parked ids tried per freed slot: an id whose job was meanwhile taken again by its park's end, or removed, is skipped. */
const PROMOTION_TRIES = 20;

export function organizationSlots(queue: SlotQueue, perOrganization: number, logger: Logger): OrganizationSlots {
  const parkedKey = (organizationId: number) => queue.toKey(`parked:${organizationId}`);
  const client = async () => (await queue.getBackend().client) as Scripting;

  const freed = async (organizationId: number): Promise<void> => {
    const redis = await client();
    for (let tries = 0; tries < PROMOTION_TRIES; tries += 1) {
      const id = await redis.eval(FREE_SCRIPT, 2, queue.toKey('active'), parkedKey(organizationId), queue.toKey(''), organizationId, perOrganization);
      if (typeof id !== 'string') return;
      const parked = await queue.getJob(id);
      // Not delayed any more (taken again when its park ended) or gone: the next one.
      if (parked && await parked.promote().then(() => true, () => false)) return;
    }
  };

  return {
    async take(job, token, organizationId) {
      if (job.id === undefined) return true;
      const jobId = job.id;
      const mayRun = await client()
        .then((redis) => redis.eval(TAKE_SCRIPT, 2, queue.toKey('active'), parkedKey(organizationId), queue.toKey(''), jobId, organizationId, perOrganization))
        .then((answer) => Number(answer) === 1, (error: unknown) => {
          logger.warn({ err: error, jobId, organizationId }, 'organisation slot not checked; the job runs');
          return true;
        });
      if (mayRun) return true;
      await job.moveToDelayed(Date.now() + PARK_MS, token);
      // A job of the organisation may have finished while this one was being parked, and found it still
      // active, so could not promote it.
      await freed(organizationId).catch((error: unknown) => logger.warn({ err: error, organizationId }, 'parked job not promoted; its park ends by itself'));
      return false;
    },
    freed,
  };
}
