/**
 * Turns between organisations on a BullMQ queue: the order in which waiting jobs are taken, so that one
 * organisation's backlog never stands in front of another organisation's job.
 *
 * Every delivery gets a BullMQ priority (lower runs first; equal ones run in the order they were added)
 * by start-time fair queueing: an organisation's next job is due one turn after its previous one, and
 * never earlier than the turn the queue is serving now (the priority of the job at its head). So when
 * several organisations have jobs waiting, the worker takes one job of each in turn; a job waits behind
 * at most one queued job of every other organisation (besides those already running); an organisation
 * alone uses every slot; an organisation idle for a while gains no credit. Nothing is counted per job
 * taken: a worker picks each job once.
 *
 * What is kept is small and disposable: each organisation's next turn, in one hash beside the queue.
 * When no job waits, every organisation starts level again (the hash is cleared), which also keeps
 * turns far below BullMQ's largest priority; a backlog that never empties for millions of turns is
 * served in arrival order once it reaches it. A Redis that comes back empty loses the turns along with
 * the deliveries, which are queued again with fresh turns.
 */

/** BullMQ's largest priority (bullmq PRIORITY_LIMIT). */
export const LAST_TURN = 2 ** 21 - 1;

/** BullMQ's prioritized set scores a job priority * 2^32 + a counter (its getPriorityScore). */
const TURN_SCORE = 2 ** 32;

/**
 * KEYS[1] the queue's prioritized set, KEYS[2] the organisations' next turns; ARGV[1] the last turn,
 * ARGV[2..] one delivery each: its organisations, comma-separated. A delivery of several organisations
 * (a batch of bulk posts) takes the earliest turn among them and uses up a turn of each.
 */
const TURNS_SCRIPT = `
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local now = 1
if #head == 0 then
  redis.call('DEL', KEYS[2])
else
  now = math.floor(tonumber(head[2]) / ${TURN_SCORE})
end
local last = tonumber(ARGV[1])
local turns = {}
for i = 2, #ARGV do
  local organizations = {}
  local earliest = nil
  for organization in string.gmatch(ARGV[i], '[^,]+') do
    local due = tonumber(redis.call('HGET', KEYS[2], organization) or '0')
    organizations[#organizations + 1] = { organization, due }
    if earliest == nil or due < earliest then earliest = due end
  end
  local turn = math.min(math.max(now, earliest or now), last)
  for _, entry in ipairs(organizations) do
    if entry[2] < turn + 1 then redis.call('HSET', KEYS[2], entry[1], turn + 1) end
  end
  turns[#turns + 1] = turn
end
return turns
`;

/** What is used of a BullMQ queue here (a bullmq Queue is one). */
export interface TurnQueue {
  toKey(type: string): string;
  getBackend(): { client: Promise<unknown> };
}

interface Scripting {
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/** The key of a queue's organisations' next turns. */
export function turnsKey(queue: Pick<TurnQueue, 'toKey'>): string {
  return queue.toKey('organization-turns');
}

/**
 * The priorities of deliveries about to be added to the queue, in their order: `organizations[i]` are
 * the organisations whose work delivery i carries. Taken in one atomic step, so concurrent producers
 * (the api, reconcilers, sweepers) never hand out the same turn of one organisation twice.
 */
export async function takeTurns(queue: TurnQueue, organizations: ReadonlyArray<readonly number[]>): Promise<number[]> {
  if (organizations.length === 0) return [];
  const client = (await queue.getBackend().client) as Scripting;
  const turns = await client.eval(
    TURNS_SCRIPT, 2, queue.toKey('prioritized'), turnsKey(queue), LAST_TURN,
    ...organizations.map((each) => each.join(',')),
  ) as number[];
  return turns.map(Number);
}
