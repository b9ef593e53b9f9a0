/**
 * `npm run cluster -- --faults`: the whole fault matrix on a fresh local cluster (fault-matrix.ts),
 * every ClickHouse server and ZooKeeper node, an api, an ingest-worker and Redis alone, then in pairs; one JSON line per invariant, and a
 * non-zero exit when one fails. FAULTS_POSTS_PER_PHASE sets the accepted posts around each kill,
 * FAULTS_INSERT_QUORUM the product's CLICKHOUSE_INSERT_QUORUM (default 0, as the product's).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAIRED_FAULTS, SINGLE_FAULTS, runFaultMatrix } from './fault-matrix.ts';
import { killSpawnedServices } from '../local/cluster.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ALL_SERVERS = [['ch2'], ['ch3'], ['zk2']];

// Ctrl-C: the ClickHouse and ZooKeeper servers run detached (their own process groups), so they are
// killed here; the apis and workers, in this terminal's group, receive the signal themselves.
process.once('SIGINT', () => {
  killSpawnedServices();
  process.exit(130);
});

const started = Date.now();
const { ok, counts } = await runFaultMatrix({
  steps: [...SINGLE_FAULTS, ...ALL_SERVERS, ...PAIRED_FAULTS],
  postsPerPhase: Number(process.env.FAULTS_POSTS_PER_PHASE ?? 8),
  insertQuorum: Number(process.env.FAULTS_INSERT_QUORUM ?? 0),
  dataDir: path.join(ROOT, '.data', 'cluster-faults'),
  report: (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
});
process.stdout.write(`${JSON.stringify({ faults: { ok, ...counts, minutes: Math.round((Date.now() - started) / 6_000) / 10 } })}\n`);
process.exit(ok ? 0 : 1);
