/**
 * Reads of rollups wait for the rollups that posts completed before them still owe. A bulk post is
 * answered once its points are stored and its job completed; the worker recomputes its minute and
 * hour rollups a moment later, after recording them as owed in the same statement that completed the
 * job (`rollup_backlog`, ingest-worker/src/rollup-backlog.ts). A read that takes figures from the
 * rollups therefore first waits until no row of its organisation recorded before it is left, so it
 * sees every post answered before it, exactly. Rows recorded while it waits are not waited for: a
 * steady stream of posts never holds a read for longer than one recomputation.
 *
 * Routes that read rollups say so with `config: { readsRollups: true }`; export jobs call
 * awaitOwedRollups themselves.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { HttpError } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes figures from the rollups: it waits for those owed first (rollup-backlog.ts). */
    readsRollups?: boolean;
  }
}

export const ROLLUPS_OWED_MESSAGE = 'Readings accepted a moment ago are still being summarised; please try again shortly';
/**
 * How long a read waits at most. Owed rollups normally follow within a few tens of milliseconds; a
 * worker that died with some leaves them to another worker's backlog pass, a few seconds later.
 */
export const ROLLUP_WAIT_MAX_MS = 15_000;
const FIRST_PAUSE_MS = 5;
const LONGEST_PAUSE_MS = 50;

/**
 * Waits until the rollups the organisation's posts owed when it was called are stored; answers false
 * when some are still owed after `maxWaitMs`.
 */
export async function awaitOwedRollups(pool: Pool, organizationId: number, maxWaitMs = ROLLUP_WAIT_MAX_MS): Promise<boolean> {
  const { rows } = await pool.query<{ last: string | null }>('SELECT max(id)::text AS last FROM rollup_backlog WHERE organization_id = $1', [organizationId]);
  const last = rows[0]?.last ?? null;
  if (last === null) return true;
  const deadline = Date.now() + maxWaitMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const { rows: owed } = await pool.query<{ owed: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM rollup_backlog WHERE organization_id = $1 AND id <= $2) AS owed', [organizationId, last]);
    if (!owed[0]?.owed) return true;
    if (Date.now() >= deadline) return false;
  }
}

/** Makes routes declaring `readsRollups` wait for the owed rollups of the caller's organisation. */
export const owedRollupsPlugin = fp(async (app: FastifyInstance, deps: { pg: Pool }) => {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config?.readsRollups) return;
    if (await awaitOwedRollups(deps.pg, principalOf(request).organizationId)) return;
    reply.header('retry-after', '5');
    throw new HttpError(503, ROLLUPS_OWED_MESSAGE);
  });
}, { name: 'owed-rollups' });
