/**
 * docker-compose.yml cannot be started on this machine (no Docker engine), so this test keeps it
 * consistent with the code instead: the variables it sets are those config.ts reads and parse with
 * the compose defaults, the ports and health route match, the uploads folder is shared between the
 * api and the ingest-worker, and the Dockerfiles build the server to JavaScript and run it, compiled,
 * with production dependencies only (no tsx), from existing entry points as the non-root user.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { apiEnvSchema, exportWorkerEnvSchema, ingestWorkerEnvSchema, parseEnv, workerEnvSchema } from '@bioprocess/shared/server/config';
import { API_GLIBC_TUNABLES, API_NODE_OPTIONS, apiProcessEnv } from '../../../deploy/local/allocator.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The export condition under which @bioprocess/shared resolves to its compiled dist/ (see shared/package.json). */
const COMPILED = 'compiled';

/** The TypeScript source a compiled entry point is built from: api/dist/main.js -> api/src/main.ts. */
function sourceOf(entry: string): string {
  return entry.replace(/^([^/]+)\/dist\/(.+)\.js$/, '$1/src/$2.ts');
}

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

interface Compose {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

function loadCompose(): Compose {
  const document = parseDocument(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  expect(document.errors).toEqual([]);
  return document.toJS() as Compose;
}

/** Compose interpolation with nothing set on the host: `${NAME:-default}` becomes its default. */
function withDefaults(value: string): string {
  return value.replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_match, fallback: string | undefined) => fallback ?? '');
}

function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([name, value]) => [name, withDefaults(String(value))]));
}

const compose = loadCompose();
const APP_SERVICES = { api: apiEnvSchema, 'ingest-worker': ingestWorkerEnvSchema, 'audit-worker': workerEnvSchema } as const;

describe('docker-compose.yml', () => {
  it('runs PostgreSQL 16, Redis 7 without eviction and with an append-only file, ClickHouse, the api and the workers', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'audit-worker', 'clickhouse', 'export-worker', 'ingest-worker', 'postgres', 'redis']);
    expect(compose.services.postgres?.image).toBe('postgres:16');
    expect(compose.services.redis?.image).toBe('redis:7');
    expect(compose.services.redis?.command?.join(' ')).toContain('--maxmemory-policy noeviction');
    expect(compose.services.redis?.command?.join(' ')).toContain('--appendonly yes');
    expect(withDefaults(compose.services.clickhouse?.image ?? '')).toMatch(/^clickhouse\/clickhouse-server:\d+\.\d+/);
  });

  it.each(Object.entries(APP_SERVICES))('gives %s only variables its configuration schema reads, valid with the defaults', (name, schema) => {
    const environment = environmentOf(compose.services[name] as ComposeService);
    const known = Object.keys(schema.shape);
    expect(Object.keys(environment).filter((variable) => !known.includes(variable))).toEqual([]);
    const parsed = parseEnv(schema, environment);
    expect(parsed).toMatchObject({ NODE_ENV: 'production', UPLOAD_DIR: '/data/uploads', CLICKHOUSE_DATABASE: 'bioprocess' });
    expect(new URL(parsed.DATABASE_URL).hostname).toBe('postgres');
    expect(new URL(parsed.REDIS_URL).hostname).toBe('redis');
    expect(new URL(parsed.CLICKHOUSE_URL).hostname).toBe('clickhouse');
  });

  it('connects with the credentials the data services are created with', () => {
    const postgres = environmentOf(compose.services.postgres as ComposeService);
    const clickhouse = environmentOf(compose.services.clickhouse as ComposeService);
    const api = environmentOf(compose.services.api as ComposeService);
    const database = new URL(api.DATABASE_URL as string);
    expect([database.username, database.password, database.pathname]).toEqual([postgres.POSTGRES_USER, postgres.POSTGRES_PASSWORD, `/${postgres.POSTGRES_DB}`]);
    const analytics = new URL(api.CLICKHOUSE_URL as string);
    expect([analytics.username, analytics.password]).toEqual([clickhouse.CLICKHOUSE_USER, clickhouse.CLICKHOUSE_PASSWORD]);
    expect(api.CLICKHOUSE_DATABASE).toBe(clickhouse.CLICKHOUSE_DB);
  });

  it('publishes the api on 8080, where it listens, with a health check on /api/v1/health', () => {
    const api = compose.services.api as ComposeService;
    const env = parseEnv(apiEnvSchema, environmentOf(api));
    expect(env.PORT).toBe(8080);
    expect(api.ports?.map(withDefaults)).toEqual(['8080:8080']);
    expect(api.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:8080/api/v1/health');
  });

  it('shares one uploads volume, mounted at UPLOAD_DIR, between the api and the ingest-worker', () => {
    for (const name of ['api', 'ingest-worker']) {
      const service = compose.services[name] as ComposeService;
      expect(service.volumes).toContain(`uploads:${environmentOf(service).UPLOAD_DIR}`);
    }
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['uploads', 'postgres-data', 'redis-data', 'clickhouse-data']));
  });

  it('runs the export-worker from the api image with its own entry point, its variables, and the exports volume the api serves', () => {
    const worker = compose.services['export-worker'] as ComposeService & { image?: string; command?: string[] };
    expect(worker.image).toBe(compose.services.api?.image);
    expect(worker.command?.slice(0, 2)).toEqual(['node', `--conditions=${COMPILED}`]);
    const entry = worker.command?.find((part) => part.startsWith('api/dist/') && part.endsWith('.js'));
    expect(entry && existsSync(path.join(ROOT, sourceOf(entry))), `${entry} is built from an existing source`).toBe(true);
    const environment = environmentOf(worker);
    const known = Object.keys(exportWorkerEnvSchema.shape);
    expect(Object.keys(environment).filter((variable) => !known.includes(variable))).toEqual([]);
    const parsed = parseEnv(exportWorkerEnvSchema, environment);
    for (const service of [worker, compose.services.api as ComposeService]) expect(service.volumes).toContain(`exports:${parsed.EXPORT_DIR}`);
    expect(Object.keys(compose.volumes)).toContain('exports');
  });

  it('waits on health checks: every dependency is healthy first, and every data service checks its health', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(condition, `${name} -> ${dependency}`).toBe('service_healthy');
        expect(compose.services[dependency]?.healthcheck, `${dependency} has a health check`).toBeDefined();
      }
    }
    for (const name of ['postgres', 'redis', 'clickhouse', 'api']) expect(compose.services[name]?.healthcheck).toBeDefined();
  });
});

describe('deploy Dockerfiles', () => {
  const images = Object.entries(APP_SERVICES).map(([name]) => {
    const build = compose.services[name]?.build;
    if (!build) throw new Error(`${name} has no build section`);
    return { name, build, dockerfile: readFileSync(path.join(ROOT, build.context, build.dockerfile), 'utf8') };
  });

  it.each(images)('builds $name in stages from node:20-bookworm-slim with npm ci and runs it as node', ({ dockerfile }) => {
    expect(dockerfile).toContain('ARG NODE_IMAGE=node:20-bookworm-slim');
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^RUN npm ci$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    // Exec form (["node", "--conditions=compiled", ...]) or shell form alike.
    expect(dockerfile.replace(/[",[\]]/g, ' ').replace(/\s+/g, ' ')).toContain(`node --conditions=${COMPILED} `);
  });

  it.each(images)('starts the compiled entry point of $name, built from a source that exists', ({ name, build, dockerfile }) => {
    const entry = name === 'api' ? /"(api\/dist\/main\.js)"/.exec(dockerfile)?.[1] : /WORKER_ENTRY=(\S+)/.exec(dockerfile)?.[1]?.replace('${WORKER}', build.args?.WORKER ?? '');
    expect(build.args?.WORKER ?? 'api').toBe(name);
    expect(entry).toBe(`${name}/dist/main.js`);
    expect(existsSync(path.join(ROOT, sourceOf(entry as string))), `${sourceOf(entry as string)} exists`).toBe(true);
  });

  it.each(images)('compiles $name with tsc in the build stage and runs only the output and production dependencies', ({ name, build, dockerfile }) => {
    const workspace = build.args?.WORKER ? '${WORKER}' : name;
    const stages = dockerfile.split(/^(?=FROM )/m);
    const runtime = stages.at(-1) as string;
    expect(dockerfile).toContain(`RUN npm run build -w ${workspace}`);
    const manifest = JSON.parse(readFileSync(path.join(ROOT, name, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts.build).toBe('tsc -b tsconfig.build.json');
    expect(manifest.scripts.start).toBe(`node --conditions=${COMPILED} dist/main.js`);
    // The runtime stage takes node_modules from a stage that installed without devDependencies (tsx among them).
    const dependencies = /^COPY --from=(\S+) \/app\/node_modules node_modules$/m.exec(runtime)?.[1];
    const dependencyStage = stages.find((stage) => stage.includes(` AS ${dependencies}\n`)) ?? '';
    expect(dependencyStage).toContain(`RUN npm ci --omit=dev --workspace=${workspace}`);
    // A worker's stage sees no other workspace's manifest: npm would follow the workers' test-only
    // link to the api and install the api's dependencies into the worker's image.
    if (build.args?.WORKER) {
      expect(dependencyStage.match(/^COPY \S*package\.json\S* \S+$/gm)).toEqual(['COPY shared/package.json shared/', 'COPY ${WORKER}/package.json ${WORKER}/']);
    }
    for (const output of ['shared/package.json', 'shared/dist', `${workspace}/package.json`, `${workspace}/dist`]) {
      expect(runtime).toMatch(new RegExp(`^COPY --from=build /app/${output.replace(/[$/{}]/g, '\\$&')} `, 'm'));
    }
    expect(runtime).not.toMatch(/\/src\b|tsx/);
  });

  it('builds each server package into dist/ and resolves @bioprocess/shared to that output under the compiled condition', () => {
    for (const workspace of ['shared', 'api', 'ingest-worker', 'audit-worker']) {
      const { config } = ts.readConfigFile(path.join(ROOT, workspace, 'tsconfig.build.json'), ts.sys.readFile) as { config: { compilerOptions: Record<string, unknown> } };
      expect(config.compilerOptions, workspace).toMatchObject({ rootDir: 'src', outDir: 'dist', noEmit: false, rewriteRelativeImportExtensions: true });
    }
    const shared = JSON.parse(readFileSync(path.join(ROOT, 'shared/package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    expect(shared.exports['./*']).toEqual({ [COMPILED]: './dist/*.js', default: './src/*.ts' });
    expect(readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('dist/');
  });

  it('runs the api migrations and demo data from the runtime image, where the compiled api looks for them', () => {
    const api = images.find((image) => image.name === 'api');
    for (const folder of ['api/migrations', 'api/demo-data']) expect(api?.dockerfile).toContain(`COPY --from=build /app/${folder} ${folder}`);
  });

  it('builds the console into the api image, where the api serves it from CONSOLE_DIST', () => {
    const api = images.find((image) => image.name === 'api');
    expect(api?.dockerfile).toContain('npm run build -w console');
    expect(api?.dockerfile).toContain('COPY --from=build /app/console/dist console/dist');
    expect(environmentOf(compose.services.api as ComposeService).CONSOLE_DIST).toBe('console/dist');
  });

  it('runs the api with the memory settings that npm start and the bench give it', () => {
    const api = images.find((image) => image.name === 'api');
    expect(api?.dockerfile).toContain(`ENV GLIBC_TUNABLES=${API_GLIBC_TUNABLES}`);
    expect(images.find((image) => image.name === 'ingest-worker')?.dockerfile).not.toContain('GLIBC_TUNABLES');
    expect(apiProcessEnv({}).GLIBC_TUNABLES).toBe(API_GLIBC_TUNABLES);
    expect(apiProcessEnv({ GLIBC_TUNABLES: '' }).GLIBC_TUNABLES).toBe('');
    expect(api?.dockerfile).toContain(`ENV NODE_OPTIONS=${API_NODE_OPTIONS}`);
    expect(apiProcessEnv({}).NODE_OPTIONS).toBe(API_NODE_OPTIONS);
    expect(apiProcessEnv({ NODE_OPTIONS: '--enable-source-maps' }).NODE_OPTIONS).toBe(`--enable-source-maps ${API_NODE_OPTIONS}`);
    expect(apiProcessEnv({ NODE_OPTIONS: '--max-semi-space-size=8' }).NODE_OPTIONS).toBe('--max-semi-space-size=8');
  });

  it('keeps local dependencies, builds and data out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.data', '.git', '.env']));
  });
});
