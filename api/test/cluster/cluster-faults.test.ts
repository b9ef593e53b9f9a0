/**
 * The product on a 2 x 2 ClickHouse cluster with a 3-node ZooKeeper ensemble, two apis behind a
 * round-robin proxy and two ingest-workers (deploy/local/cluster.mjs), fed steadily while one
 * ClickHouse server, one ZooKeeper node, one api, and one ingest-worker together with the run's Redis
 * (started again empty) are killed -9 in turn and started again: every accepted point is stored exactly once, rollups equal the points, reads answer
 * while each is down, both shards hold points and each shard's replicas agree afterwards. The whole matrix (every server, pairs) is `npm run cluster -- --faults`.
 *
 * Needs Debian's zookeeper and clickhouse-server (installed on demand as root) and the ports of
 * cluster.mjs (CLUSTER_PORT_OFFSET shifts them); skipped where neither can be had. About three minutes.
 */
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runFaultMatrix } from '../../../deploy/cluster/fault-matrix.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const installed = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
/** Installed already, or installable (Debian, as root): the cluster's starter installs what is missing. */
const clusterPossible = (existsSync('/usr/share/java/zookeeper.jar') && installed('clickhouse-server'))
  || (existsSync('/etc/debian_version') && process.getuid?.() === 0);

describe.skipIf(!clusterPossible)('the product on a sharded, replicated cluster', () => {
  it('stores every accepted point once through a killed ClickHouse server, ZooKeeper node, api, and ingest-worker with Redis lost', async () => {
    const { reports, counts } = await runFaultMatrix({
      // The first replica of the first shard, without a write quorum: the server the first process (an
      // api) talks to, and the replica every process writes the shard's rows to; parts it acknowledged
      // and had not yet sent to its peer are missing while it is down, and the minutes recomputed
      // meanwhile are rechecked from every replica once it is back.
      // An ingest-worker killed mid-job as Redis loses every queue entry and lock: the other worker, and
      // the killed one once back, find the jobs again from PostgreSQL (the durability tests' case, with two).
      steps: [['ch1'], ['zk1'], ['api1'], ['ingest1', 'redis']],
      insertQuorum: 0,
      postsPerPhase: 4,
      // Four instruments: the first organisation's fourth lives on the other shard than the first three.
      feeds: 4,
      dataDir: path.join(ROOT, '.data', 'cluster-test'),
      report: (line) => process.stderr.write(`[faults] ${JSON.stringify(line)}\n`),
    });
    process.stderr.write(`[faults] ${JSON.stringify(counts)}\n`);
    const failed = reports.filter((line) => !line.pass);
    expect(failed).toEqual([]);
    expect(reports.some((line) => line.invariant.startsWith('points_exactly_once'))).toBe(true);
  }, 600_000);
});
