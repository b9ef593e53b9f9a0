/**
 * Bad input never gives a 5xx: every route of the OpenAPI document is called with hostile values
 * (huge and negative numbers, wrong types, long strings, Unicode, control characters, missing fields)
 * in its path parameters, query and JSON body, as an admin, an editor, a viewer, an API key and with
 * no token. Every answer must be a 2xx, 3xx or 4xx, and a 4xx must be `{ "error": "<text>" }`.
 *
 * Runs are bounded per route so the whole file stays well under a minute. Left out, because they
 * would break the fixture for the iterations after them: signing out (it revokes the caller's
 * session). Ids of users, organisations and API keys are only ever hostile values, never the small
 * ids of the fixture's own rows, so no iteration demotes or deletes the callers themselves; other
 * ids include small numbers that hit real rows. `?wait=true` is never sent: with no worker running
 * it would hold a request for minutes.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createApiKey, createPlant, createUnitOperation } from '../support/fixtures.ts';

const RUNS_PER_ROUTE = 24;
const SKIPPED = new Set(['POST /api/v1/auth/logout']);
/** Path prefixes whose ids are never the fixture's own (the callers' accounts and keys live there). */
const CALLER_IDS = ['/api/v1/auth/users/', '/api/v1/organizations/', '/api/v1/api-keys/'];

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
}
interface Parameter { name: string; in: string; schema?: JsonSchema; required?: boolean }
interface Operation { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }

/**
 * Text that has broken something before: names every JavaScript object has (taken as formula
 * functions), markup that charts rendered as live links, and colours that were written into a style
 * attribute.
 */
const HOSTILE_NAMES = [
  'hasOwnProperty', 'constructor', '__proto__', 'valueOf', 'toString', 'constructor(t)', '__proto__ + 1', 'hasOwnProperty(a, 1)',
  '<a href="//elsewhere.example" id="evil">x</a>', '<img src=x onerror=alert(1)>', 'red;background:url(//elsewhere.example)',
  '#fff" onmouseover="alert(1)', '{point.y}<b>',
];
const HOSTILE_TEXT = [
  '99999999999999999999', '-99999999999999999999', '9223372036854775808', '2147483648', '-1', '0', '1.5', '1e309', '-1e309',
  'NaN', 'Infinity', '0x1F', '', ' ', 'null', 'undefined', 'true', '[]', '{}', '[object Object]',
  "'; DROP TABLE users; --", '../../../../etc/passwd', '%00', '\u0000', '\u202e\u0645\u0631\u062d\u0628\u0627', '🧪🧫💉',
  'İstanbul', 'ǅ', '\uFEFF1', '\uD800', '2024-02-30T25:61:61Z', '9999-12-31T23:59:59Z', '-271821-04-20T00:00:00Z',
  '1m', '0s', '99999999999999999999d', "=cmd|' /C calc'!A0", 'a'.repeat(10_000),
  ...HOSTILE_NAMES, '100000', '1000000000',
];
const hostileText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 300, maxLength: 2_000 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n })).map(String) },
);
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 63, 0.5, [], {}, [null], { '': null }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Values shaped like the schema asks, each part of them liable to be hostile or missing. */
function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const alternatives = [...(schema?.anyOf ?? []), ...(schema?.oneOf ?? []), ...(schema?.allOf ?? [])];
  if (alternatives.length > 0 && depth < 4) return fc.oneof(...alternatives.map((inner) => valueFor(inner, depth + 1)), hostileJson);
  if (!schema || depth > 4) return hostileJson;
  if (schema.enum) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: hostileJson });
  const type = Array.isArray(schema.type) ? schema.type.find((entry) => entry !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = Object.entries(schema.properties ?? {});
      const record = fc.record(Object.fromEntries(properties.map(([key, inner]) => [key, valueFor(inner, depth + 1)])), { requiredKeys: [] });
      return fc.oneof({ weight: 5, arbitrary: record }, { weight: 1, arbitrary: hostileJson });
    }
    case 'array':
      return fc.oneof({ weight: 3, arbitrary: fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 }) }, { weight: 1, arbitrary: hostileJson });
    case 'integer':
    case 'number':
      return fc.oneof(fc.integer({ min: 1, max: 30 }), hostileJson);
    case 'boolean':
      return fc.oneof(fc.boolean(), hostileJson);
    case 'string':
      return fc.oneof(
        fc.constantFrom('Reactor 1', 'fuzz@example.test', '2024-07-01T00:00:00Z', '1719792000000', 'temperature', 'celsius', 'editor', 'fermentation'),
        hostileJson,
      );
    default:
      return hostileJson;
  }
}

/** The value hostile numbers are tried against, in the examples every route starts with. */
const EXTREMES = ['99999999999999999999', '-99999999999999999999', 'a'.repeat(10_000), '\u0000', '🧪'];

/** A plausible value of a parameter, so that the extremes are tried one parameter at a time. */
function plausible(schema: JsonSchema | undefined): string {
  const inner = schema?.anyOf?.[0] ?? schema?.oneOf?.[0] ?? schema;
  if (inner?.enum) return String(inner.enum[0]);
  const type = Array.isArray(inner?.type) ? inner.type[0] : inner?.type;
  return type === 'integer' || type === 'number' ? '1' : '2024-07-01T00:00:00Z';
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '');

describe('every route answers hostile input without a 5xx', () => {
  let ctx: TestContext;
  let paths: Record<string, Record<string, Operation>>;
  const tokens: Record<string, string | undefined> = {};

  beforeAll(async () => {
    ctx = await createTestContext();
    const plant = await createPlant(ctx, 2);
    await createUnitOperation(ctx, plant, { start: '2024-07-01T00:00:00Z', end: '2024-07-02T00:00:00Z' });
    tokens.admin = (await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' })).token;
    tokens.editor = plant.editor.token;
    tokens.viewer = plant.viewer.token;
    tokens['API key'] = await createApiKey(ctx, plant.organizationId, 'editor');
    tokens['no token'] = undefined;
    const document = await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(document.statusCode).toBe(200);
    paths = document.json().paths;
  });
  afterAll(async () => { await ctx?.close(); });

  it('walks the OpenAPI document', async () => {
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })));
    expect(operations.length).toBeGreaterThan(40);
    const failures: string[] = [];
    let calls = 0;
    for (const { path, method, operation } of operations) {
      if (SKIPPED.has(`${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`)) continue;
      const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in !== 'header' || parameter.name !== 'authorization');
      const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
      const queryParameters = parameters.filter((parameter) => parameter.in === 'query' && parameter.name !== 'wait');
      const headerParameters = parameters.filter((parameter) => parameter.in === 'header');
      const callerIds = CALLER_IDS.some((prefix) => path.startsWith(prefix));
      const pathValue = callerIds ? hostileText : fc.oneof(hostileText, fc.integer({ min: 1, max: 20 }).map(String));
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;

      const request = fc.record({
        role: fc.constantFrom(...Object.keys(tokens)),
        path: fc.tuple(...pathParameters.map(() => pathValue)),
        query: fc.record(Object.fromEntries(queryParameters.map((parameter) => [parameter.name, fc.oneof(valueFor(parameter.schema), hostileText)])), { requiredKeys: [] }),
        headers: fc.record(Object.fromEntries(headerParameters.map((parameter) => [parameter.name, hostileText.filter((text) => /^[\t\x20-\x7e]*$/.test(text))])), { requiredKeys: [] }),
        body: method === 'GET' || method === 'DELETE' && !bodySchema ? fc.constant(undefined) : fc.oneof({ weight: 4, arbitrary: valueFor(bodySchema) }, { weight: 1, arbitrary: fc.constant(undefined) }),
      });

      // First every extreme in each parameter alone, the others plausible; then random requests.
      const baseline = {
        role: 'editor',
        path: pathParameters.map(() => '1'),
        // Required parameters, ids and times: what a route needs to get as far as the others.
        // (one id only: routes that take several ids take one of them at a time).
        query: Object.fromEntries(queryParameters
          .filter((parameter) => parameter.required || /_(time|date)$/.test(parameter.name)
            || parameter === queryParameters.find((candidate) => candidate.name.endsWith('_id')))
          .map((parameter) => [parameter.name, plausible(parameter.schema)])),
        headers: {},
        body: undefined,
      };
      const examples: Array<[typeof baseline]> = [];
      for (const extreme of EXTREMES) {
        pathParameters.forEach((_parameter, index) => {
          if (!callerIds) examples.push([{ ...baseline, path: baseline.path.map((value, at) => (at === index ? extreme : value)) }]);
        });
        for (const parameter of queryParameters) examples.push([{ ...baseline, query: { ...baseline.query, [parameter.name]: extreme } }]);
      }
      // And bodies whose free text is a NUL character (PostgreSQL cannot store one), then each
      // hostile name, all else plausible.
      const bodyObject = bodySchema?.anyOf?.[0] ?? bodySchema;
      if (bodyObject?.properties) {
        for (const text of ['\u0000', ...HOSTILE_NAMES]) {
          const body = Object.fromEntries(Object.entries(bodyObject.properties).flatMap(([key, property]) => {
            const type = Array.isArray(property.type) ? property.type[0] : property.type;
            if (property.enum) return [[key, property.enum[0]]];
            if (type === 'string') return [[key, text]];
            if (type === 'integer' || type === 'number') return [[key, 1]];
            return [];
          }));
          examples.push([{ ...baseline, role: 'admin', body: body as never }]);
        }
      }
      const failuresBefore = failures.length;
      const outcome = await fc.check(fc.asyncProperty(request, async ({ role, path: pathValues, query, headers, body }) => {
        let url = path;
        pathParameters.forEach((parameter, index) => { url = url.replace(`{${parameter.name}}`, encodeURIComponent(Buffer.from(pathValues[index]!).toString())); });
        const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, asText(value)]));
        const target = search.size > 0 ? `${url}?${search}` : url;
        const response = await ctx.request({
          method: method as 'GET', url: target, token: tokens[role],
          headers: { ...(headers as Record<string, string>), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
        });
        const where = `${method} ${target.slice(0, 200)} as ${role} with ${JSON.stringify(body)?.slice(0, 300)}`;
        if (response.statusCode >= 500) {
          failures.push(`${response.statusCode} ${where}: ${response.body.slice(0, 200)}`);
          return false;
        }
        if (response.statusCode >= 400) {
          const answer = response.json() as { error?: unknown };
          if (typeof answer.error !== 'string' || answer.error === '') {
            failures.push(`${response.statusCode} without { error } ${where}: ${response.body.slice(0, 200)}`);
            return false;
          }
        }
        calls += 1;
        return true;
      }), { numRuns: RUNS_PER_ROUTE, endOnFailure: true, examples: examples as never });
      // A thrown error (rather than a bad answer) is a failure too.
      if (outcome.failed && failures.length === failuresBefore) {
        failures.push(`${method} ${path}: ${String(outcome.errorInstance)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan((operations.length - SKIPPED.size) * RUNS_PER_ROUTE * 0.9);
  }, 180_000);
});
