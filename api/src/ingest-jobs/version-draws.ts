/**
 * Request versions (the order in which time-series requests were accepted), drawn from the PostgreSQL
 * sequence. Feeds post many times a second: requests that ask while a draw is on its way share the
 * next one (one statement for all of them). The order guarantee holds: a request sent after another
 * was answered asks after that one's draw, so it gets a higher version.
 */
import { GroupCommit } from '@bioprocess/shared/group-commit';
import type { Pool } from '@bioprocess/shared/server/postgres';

export interface VersionDraws {
  next(): Promise<number>;
}

/** Versions drawn in one statement at most: a bound on its answer, not a pause. */
const MAX_DRAW = 1_024;

export function createVersionDraws(pool: Pool): VersionDraws {
  const draws = new GroupCommit<null, number>({
    flush: async (asks) => {
      // Named: prepared once per connection (feeds run it many times a second).
      const { rows } = await pool.query<{ v: number }>({
        name: 'draw-versions',
        text: "SELECT nextval('time_series_version_seq') AS v FROM generate_series(1, $1::integer)",
        values: [asks.length],
      });
      return rows.map((row) => Number(row.v));
    },
    weigh: () => 1,
    maxWeight: MAX_DRAW,
  });
  return { next: () => draws.submit(null) };
}
