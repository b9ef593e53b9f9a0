/**
 * What keeps the clustered layout consistent without starting it (no services): every ClickHouse
 * migration has a clustered variant that runs ON CLUSTER, idempotently, with a ZooKeeper path of its
 * own per database and table; and deploy/docker-compose.cluster.yml (which no machine here can start)
 * agrees with its ClickHouse and nginx configuration and with the product's configuration schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { apiEnvSchema, ingestWorkerEnvSchema, parseEnv } from '@bioprocess/shared/server/config';
import { LOCAL_SUFFIX, POINTS_TABLE, ROLLUP_HOUR_TABLE, ROLLUP_MINUTE_TABLE } from '@bioprocess/shared/server/clickhouse-tables';
import { splitStatements } from '../../src/db/migrate.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MIGRATIONS = path.join(ROOT, 'api', 'migrations', 'clickhouse');
const sqlFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.sql')).sort();

describe('clustered ClickHouse migrations', () => {
  const clustered = sqlFiles(path.join(MIGRATIONS, 'cluster'));
  const statements = clustered.flatMap((name) => splitStatements(readFileSync(path.join(MIGRATIONS, 'cluster', name), 'utf8')));

  it('has a clustered variant of every single-node migration, and no other', () => {
    expect(clustered).toEqual(sqlFiles(MIGRATIONS));
  });

  it('runs every statement ON CLUSTER and idempotently (IF NOT EXISTS, or one ADD COLUMN), on tables named with their database', () => {
    for (const statement of statements) {
      expect(statement).toMatch(/^(?:CREATE TABLE IF NOT EXISTS \$\{database\}\.\w+ ON CLUSTER \$\{cluster\}|ALTER TABLE \$\{database\}\.\w+ ON CLUSTER \$\{cluster\}_(?:shards|replicas) ADD COLUMN \w+ [^,]+$)/);
    }
  });

  it('alters a replicated table on <cluster>_shards and a Distributed one on <cluster>_replicas (ClickHouse 18.16, docs/scale.md)', () => {
    for (const statement of statements.filter((text) => text.startsWith('ALTER TABLE'))) {
      const local = new RegExp(`^ALTER TABLE \\$\\{database\\}\\.\\w+${LOCAL_SUFFIX} `).test(statement);
      expect(statement, statement).toContain(local ? 'ON CLUSTER ${cluster}_shards ADD' : 'ON CLUSTER ${cluster}_replicas ADD');
    }
  });

  it('adds each column of points to the replicated tables and the Distributed table over them alike', () => {
    const added = (table: string) => statements.flatMap((statement) => {
      const match = new RegExp(`^ALTER TABLE \\$\\{database\\}\\.${table} ON CLUSTER \\$\\{cluster\\}_(?:shards|replicas) ADD COLUMN (.+)$`).exec(statement);
      return match ? [match[1]] : [];
    });
    expect(added(`${POINTS_TABLE}${LOCAL_SUFFIX}`).length).toBeGreaterThan(0);
    expect(added(POINTS_TABLE)).toEqual(added(`${POINTS_TABLE}${LOCAL_SUFFIX}`));
  });

  it('replicates each time-series table under a path of its own per shard, database and table, with an unsigned version', () => {
    for (const table of [POINTS_TABLE, ROLLUP_MINUTE_TABLE, ROLLUP_HOUR_TABLE]) {
      const local = statements.find((statement) => statement.startsWith(`CREATE TABLE IF NOT EXISTS \${database}.${table}${LOCAL_SUFFIX} `));
      expect(local, table).toBeDefined();
      expect(local).toContain(`ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/\${database}/${table}', '{replica}', version)`);
      expect(local).toMatch(/\bversion UInt64\b/);
      const distributed = statements.find((statement) => statement.startsWith(`CREATE TABLE IF NOT EXISTS \${database}.${table} `));
      expect(distributed).toContain(`ENGINE = Distributed(\${cluster}, \${database}, ${table}${LOCAL_SUFFIX}, cityHash64(organization_id, instrument_id))`);
    }
  });
});

interface ComposeService { environment?: Record<string, string>; volumes?: string[]; depends_on?: Record<string, unknown> }

describe('deploy/docker-compose.cluster.yml', () => {
  const document = parseDocument(readFileSync(path.join(ROOT, 'deploy', 'docker-compose.cluster.yml'), 'utf8'), { merge: true });
  const compose = document.toJS() as { services: Record<string, ComposeService> };
  const withDefaults = (value: string) => value.replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_match, fallback: string | undefined) => fallback ?? '');
  const environmentOf = (name: string) => Object.fromEntries(Object.entries(compose.services[name]?.environment ?? {}).map(([key, value]) => [key, withDefaults(String(value))]));
  const clusterXml = readFileSync(path.join(ROOT, 'deploy', 'cluster', 'clickhouse', 'cluster.xml'), 'utf8');
  const nginx = readFileSync(path.join(ROOT, 'deploy', 'cluster', 'nginx', 'cluster.conf'), 'utf8');

  it('parses', () => {
    expect(document.errors).toEqual([]);
  });

  it('gives the apis and ingest-workers a configuration the product accepts, naming the cluster of the servers', () => {
    const clusterName = /<remote_servers>\s*<(\w+)>/.exec(clusterXml)?.[1];
    for (const name of ['api-1', 'api-2']) {
      const env = parseEnv(apiEnvSchema, environmentOf(name));
      expect(env.CLICKHOUSE_CLUSTER).toBe(clusterName);
    }
    for (const name of ['ingest-worker-1', 'ingest-worker-2']) {
      expect(parseEnv(ingestWorkerEnvSchema, environmentOf(name)).CLICKHOUSE_CLUSTER).toBe(clusterName);
    }
  });

  const shardsOf = (cluster: string) => {
    const block = new RegExp(`<${cluster}>([\\s\\S]*?)</${cluster}>`).exec(clusterXml)?.[1] ?? '';
    return [...block.matchAll(/<shard>([\s\S]*?)<\/shard>/g)].map((match) => [...match[1]!.matchAll(/<host>([\w-]+)<\/host>/g)].map((host) => host[1]!));
  };

  it('runs each server of cluster.xml with the shard it is listed in, a replica name of its own and the configuration mounted', () => {
    const shards = shardsOf('bioprocess');
    expect(shards.flat().length).toBe(4);
    const replicas = new Set<string>();
    shards.forEach((hosts, index) => {
      for (const host of hosts) {
        const env = environmentOf(host);
        expect(env.CLICKHOUSE_SHARD, host).toBe(String(index + 1));
        replicas.add(env.CLICKHOUSE_REPLICA!);
        expect(compose.services[host]?.volumes).toContain('./cluster/clickhouse/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro');
      }
    });
    expect(replicas.size).toBe(4);
  });

  it('lists every server of the cluster as a shard of its own in <cluster>_replicas, and the first replica of each shard in <cluster>_shards', () => {
    expect(shardsOf('bioprocess_replicas')).toEqual(shardsOf('bioprocess').flat().map((host) => [host]));
    expect(shardsOf('bioprocess_shards')).toEqual(shardsOf('bioprocess').map((hosts) => [hosts[0]]));
    expect(/<bioprocess_shards>(?:\s*<shard><internal_replication>true<\/internal_replication>[\s\S]*?<\/shard>)+\s*<\/bioprocess_shards>/.test(clusterXml)).toBe(true);
  });

  it('lists the same ZooKeeper nodes in ClickHouse and in the ensemble', () => {
    const inClickHouse = [...clusterXml.matchAll(/<node><host>([\w-]+)<\/host><port>2181<\/port><\/node>/g)].map((match) => match[1]).sort();
    const ensemble = Object.keys(compose.services).filter((name) => name.startsWith('zookeeper-')).sort();
    expect(inClickHouse).toEqual(ensemble);
    for (const name of ensemble) expect(environmentOf(name).ZOO_SERVERS).toContain(`${name}:2888:3888`);
  });

  it('balances over services that exist', () => {
    const upstreams = [...nginx.matchAll(/server ([\w-]+):(\d+)/g)].map((match) => match[1]!);
    for (const host of upstreams) expect(compose.services[host], host).toBeDefined();
    expect(new Set(upstreams)).toEqual(new Set(['api-1', 'api-2', 'clickhouse-1', 'clickhouse-2', 'clickhouse-3', 'clickhouse-4']));
  });
});
