import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  alertWorkerEnvSchema, apiEnvSchema, auditWorkerEnvSchema, baseEnvSchema, ConfigError, connectorEnvSchema, exportWorkerEnvSchema, ingestWorkerEnvSchema, parseEnv,
  workerEnvSchema,
} from './config.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseEnv', () => {
  it('applies the documented defaults when nothing is set', () => {
    const env = parseEnv(apiEnvSchema, {});
    expect(env).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bioprocess',
      REDIS_URL: 'redis://127.0.0.1:6379',
      CLICKHOUSE_URL: 'http://127.0.0.1:8123',
      CLICKHOUSE_DATABASE: 'bioprocess',
      QUEUE_PREFIX: 'bioprocess',
      SIGNUP_ENABLED: true,
      SEED_DEMO: false,
      LOG_LEVEL: 'info',
    });
    expect(parseEnv(workerEnvSchema, {}).WORKER_CONCURRENCY).toBe(2);
  });

  it('treats an empty value as not set', () => {
    expect(parseEnv(apiEnvSchema, { PORT: '', DATABASE_URL: '' })).toMatchObject({ PORT: 8080, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bioprocess' });
  });

  it('coerces numbers and reads the given URLs', () => {
    const env = parseEnv(apiEnvSchema, { PORT: '8390', DATABASE_URL: 'postgresql://app:pw@db:5432/bp', REDIS_URL: 'rediss://cache:6380', CLICKHOUSE_URL: 'https://ch:8443' });
    expect(env).toMatchObject({ PORT: 8390, DATABASE_URL: 'postgresql://app:pw@db:5432/bp', REDIS_URL: 'rediss://cache:6380', CLICKHOUSE_URL: 'https://ch:8443' });
  });

  it.each([
    ['true', true], ['1', true], ['yes', true],
    ['false', false], ['0', false], ['no', false],
  ])('parses the boolean %s as %s', (value, expected) => {
    expect(parseEnv(apiEnvSchema, { SIGNUP_ENABLED: value, SEED_DEMO: value })).toMatchObject({ SIGNUP_ENABLED: expected, SEED_DEMO: expected });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://db/bioprocess'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['CLICKHOUSE_URL', 'tcp://127.0.0.1:9000'],
    ['CLICKHOUSE_DATABASE', 'drop table; --'],
    ['SIGNUP_ENABLED', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['WORKER_CONCURRENCY', '0'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    const schema = name === 'WORKER_CONCURRENCY' ? workerEnvSchema : apiEnvSchema;
    const error = configErrorOf(() => parseEnv(schema, { [name]: value }));
    expect(error.message).toMatch(new RegExp(`^Invalid configuration: ${name}: `));
  });

  it('names every bad variable at once', () => {
    const error = configErrorOf(() => parseEnv(apiEnvSchema, { PORT: 'abc', REDIS_URL: 'nope' }));
    expect(error.message).toContain('PORT: ');
    expect(error.message).toContain('REDIS_URL: ');
  });

  it('names a required variable that is missing', () => {
    const schema = baseEnvSchema.extend({ INGEST_TOKEN: z.string() });
    const error = configErrorOf(() => parseEnv(schema, {}));
    expect(error.message).toMatch(/^Invalid configuration: INGEST_TOKEN: /);
  });
});

describe('start-up with a bad variable', () => {
  it('stops the api with a non-zero exit and a message naming PORT', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'api/src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'abc', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      // main.ts loads the whole api before reading its configuration; generous for a busy machine.
      timeout: 110_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.status).not.toBeNull();
    expect(result.stderr).toContain('Invalid configuration: PORT: ');
  }, 120_000);
});

describe('TRUST_PROXY', () => {
  const trustProxy = (value?: string) => parseEnv(apiEnvSchema, value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;

  it('trusts no proxy unless told, and takes a hop count or a list of addresses and ranges', () => {
    expect(trustProxy()).toBe(false);
    expect(trustProxy('false')).toBe(false);
    expect(trustProxy('2')).toBe(2);
    expect(trustProxy('10.0.0.5, 192.168.0.0/16,::1,fd00::/8,loopback')).toEqual(['10.0.0.5', '192.168.0.0/16', '::1', 'fd00::/8', 'loopback']);
  });

  it('refuses to trust everyone, and names what is not an address', () => {
    expect(configErrorOf(() => trustProxy('true')).message).toContain('TRUST_PROXY');
    expect(configErrorOf(() => trustProxy('10.0.0.0/33')).message).toContain('10.0.0.0/33');
    expect(configErrorOf(() => trustProxy('proxy.example.com')).message).toContain('proxy.example.com');
  });
});

describe('docs/configuration.md', () => {
  it('documents every variable the schemas read, and none they do not', () => {
    const read = new Set([apiEnvSchema, ingestWorkerEnvSchema, exportWorkerEnvSchema, auditWorkerEnvSchema, alertWorkerEnvSchema, workerEnvSchema, connectorEnvSchema]
      .flatMap((schema) => Object.keys(schema.shape)));
    const page = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    // The first cell of each table row names its variables (`A` / `B` where two go together).
    const documented = new Set(page.split('\n').filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!)));
    // Read by the local scripts (npm start, test, bench) or set for the api's process, not by the schemas.
    const scriptsOnly = ['PROJECT_REDIS_PORT', 'GLIBC_TUNABLES', 'NODE_OPTIONS'];
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !read.has(name) && !scriptsOnly.includes(name))).toEqual([]);
  });
});
