/**
 * The OpenAPI document at /api/v1/openapi.json: a structurally valid OpenAPI 3 document that lists
 * every /api/v1 route the app serves (hidden ones aside), generated from the routes' zod schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/test-context.ts';

/** Routes registered with `schema: { hide: true }` (or by the docs UI plugin), left out on purpose. */
const HIDDEN_ROUTES = [/^\/api\/v1\/docs(\/|$)/, /^\/api\/v1\/openapi\.json$/, /^\/api\/v1\/dev\/outbox$/];
/** The metadata API's own paths (the time-series routes nested under unit operations are not part of it). */
const METADATA_PATHS = /^\/api\/v1\/(facilities|equipment|instruments|runs|unit-operations|unit-operation-types|comments)(\/\{id\}(\/(instruments|unit-operations|equipment|comments))?)?$/;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface OpenApiOperation {
  tags?: string[];
  summary?: string;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: unknown;
  responses?: Record<string, { description?: string }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
}

/**
 * Every (method, path) the router serves, read from Fastify's route tree (`printRoutes` prints one
 * node per line, indented four characters per level, with the methods in parentheses).
 */
function registeredRoutes(tree: string): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const prefixes: string[] = [];
  for (const line of tree.split('\n')) {
    const marker = line.search(/[├└]── /);
    if (marker < 0) continue;
    const depth = marker / 4;
    const match = /^(.*?)(?: \(([^)]*)\))?$/.exec(line.slice(marker + 4))!;
    prefixes.length = depth;
    const path = `${prefixes.join('')}${match[1]}`;
    prefixes.push(match[1]!);
    for (const method of (match[2] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) {
      routes.push({ method, path });
    }
  }
  return routes;
}

function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, refs));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') refs.push(inner);
      else collectRefs(inner, refs);
    }
  }
  return refs;
}

describe('GET /api/v1/openapi.json', () => {
  let ctx: TestContext;
  let document: OpenApiDocument;

  beforeAll(async () => {
    ctx = await createTestContext();
    const response = await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });
  afterAll(async () => { await ctx?.close(); });

  it('is a structurally valid OpenAPI 3 document', () => {
    expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(document.info.title).toBeTruthy();
    expect(document.info.version).toBeTruthy();
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path.startsWith('/')).toBe(true);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, operation] of Object.entries(item)) {
        expect(HTTP_METHODS, `${method} ${path}`).toContain(method);
        const responses = Object.entries(operation.responses ?? {});
        expect(responses.length, `${method} ${path} has responses`).toBeGreaterThan(0);
        for (const [status, response] of responses) {
          expect(status, `${method} ${path}`).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
          expect(typeof response.description, `${method} ${path} ${status} description`).toBe('string');
        }
        const pathParameters = (operation.parameters ?? []).filter((p) => p.in === 'path');
        for (const name of templated) {
          const parameter = pathParameters.find((p) => p.name === name);
          expect(parameter, `${method} ${path} declares {${name}}`).toBeDefined();
          expect(parameter!.required).toBe(true);
        }
      }
    }
    const schemas = document.components?.schemas ?? {};
    for (const ref of collectRefs(document.paths)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(schemas, ref).toHaveProperty([ref.split('/').pop()!]);
    }
  });

  it('lists every /api/v1 route the app serves, except the hidden ones', () => {
    const routes = registeredRoutes(ctx.app.printRoutes({ commonPrefix: false }))
      .filter((route) => route.path.startsWith('/api/v1') && route.method !== 'HEAD')
      .filter((route) => !HIDDEN_ROUTES.some((hidden) => hidden.test(route.path)));
    expect(routes).toEqual(expect.arrayContaining([
      { method: 'GET', path: '/api/v1/runs/:id/unit-operations' },
      { method: 'DELETE', path: '/api/v1/unit-operations/:id' },
      { method: 'GET', path: '/api/v1/unit-operation-types' },
    ]));
    const missing = routes.filter((route) => !document.paths[toOpenApiPath(route.path)]?.[route.method.toLowerCase()]);
    expect(missing).toEqual([]);
  });

  it('documents the metadata routes with tags, summaries, zod schemas and the paging limits', () => {
    const metadata = Object.entries(document.paths).filter(([path]) => METADATA_PATHS.test(path));
    expect(metadata.length).toBeGreaterThanOrEqual(14);
    for (const [path, item] of metadata) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.tags?.length, `${method} ${path} tags`).toBeGreaterThan(0);
        expect(operation.summary, `${method} ${path} summary`).toBeTruthy();
        if (method === 'post' || method === 'put') expect(operation.requestBody, `${method} ${path} body`).toBeDefined();
        const success = Object.keys(operation.responses ?? {}).find((status) => status.startsWith('2'));
        expect(success, `${method} ${path} success response`).toBeDefined();
      }
    }
    const runs = document.paths['/api/v1/runs']!;
    expect(runs.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['limit', 'offset']));
    expect(JSON.stringify(runs.get)).toContain('default 1000, maximum 10000');
    expect(JSON.stringify(runs.post!.requestBody)).toContain('facility_id');
    expect(document.paths['/api/v1/unit-operation-types']?.get).toBeDefined();
  });

  it('serves the browsable documentation page', async () => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
  });
});
