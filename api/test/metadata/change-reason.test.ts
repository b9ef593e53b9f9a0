/**
 * Reason for change through the real HTTP server: every mutating route of the OpenAPI document either
 * refuses a change without a reason when the organisation requires one, or is listed as exempt with why;
 * a reason given lands in the audit event, the audit list and the CSV; the settings are admins' and
 * validated; a bad header is a 400 naming what is wrong, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { CHANGE_REASON_KINDS, CHANGE_REASON_KIND_LABELS, CHANGE_REASON_MESSAGES, changeReasonHeaders, type ChangeReasonKind } from '@bioprocess/shared/change-reasons';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorkerFor, waitForAuditRows } from '../support/audit-drain.ts';
import { EXEMPT_ROUTES, RECORD_KIND_ROUTES } from '../../src/platform/change-reason.ts';
import { createProcessChain } from './fixtures.ts';

const MUTATING = ['post', 'put', 'patch', 'delete'];
const requiredEverywhere = Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, 'required']));

describe('reason for change', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let editor: TestUser;
  let worker: AuditWorkerHandle;
  let chain: Awaited<ReturnType<typeof createProcessChain>>;
  /** Every mutating (method, Fastify path) of the OpenAPI document. */
  let mutatingRoutes: Array<{ method: string; path: string }>;

  const settings = (payload: Record<string, unknown>, token = admin.token) =>
    ctx.request({ method: 'PUT', url: '/api/v1/organization-settings/change-reasons', token, payload });

  beforeAll(async () => {
    ctx = await createTestContext();
    const organizationId = await ctx.createOrganization();
    admin = await ctx.createUser({ organizationId, role: 'admin' });
    editor = await ctx.createUser({ organizationId, role: 'editor' });
    chain = await createProcessChain(ctx, admin.token);
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    mutatingRoutes = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations)
      .filter((method) => MUTATING.includes(method))
      .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{([^}]+)\}/g, ':$1') })));
    worker = startWorkerFor(ctx);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('starts off for every kind, and only admins change it, with validated input', async () => {
    const read = await ctx.request({ method: 'GET', url: '/api/v1/organization-settings/change-reasons', token: editor.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({ policies: Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, 'off'])), reasons: [] });
    expect((await settings({ policies: { runs: 'required' } }, editor.token)).statusCode).toBe(403);

    const badPolicy = await settings({ policies: { runs: 'sometimes' } });
    expect(badPolicy.statusCode).toBe(400);
    expect(badPolicy.json().error).toMatch(/policies\.runs must be off, optional or required/);
    const badKind = await settings({ policies: { facilities: 'required' } });
    expect(badKind.statusCode).toBe(400);
    const twice = await settings({ reasons: ['Correction', 'Correction'] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().error).toMatch(/Each reason may appear once/);

    const saved = await settings({ policies: { samples: 'optional' }, reasons: ['Correction', 'Transcription error', 'Équipement recalibré'] });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({ policies: { samples: 'optional', runs: 'off' }, reasons: ['Correction', 'Transcription error', 'Équipement recalibré'] });
    // Kinds left out keep their setting.
    expect((await settings({ policies: { runs: 'optional' } })).json().policies).toMatchObject({ samples: 'optional', runs: 'optional' });
  });

  it('names in its table only routes the OpenAPI document has', () => {
    // Every other mutating route is exempt or refuses without a reason (declared in config.changeReason): next test.
    const served = new Set(mutatingRoutes.map(({ method, path }) => `${method} ${path}`));
    expect(Object.keys(RECORD_KIND_ROUTES).filter((route) => !served.has(route))).toEqual([]);
    expect(mutatingRoutes.length).toBeGreaterThan(Object.keys(RECORD_KIND_ROUTES).length);
  });

  it('with "required" on, every mutating route that is not exempt refuses a change without a reason, naming the record kind', async () => {
    expect((await settings({ policies: requiredEverywhere })).statusCode).toBe(200);
    const ids: Record<string, number> = {};
    const refusedKinds = new Set<string>();
    for (const { method, path } of mutatingRoutes) {
      const route = `${method} ${path}`;
      if (EXEMPT_ROUTES[route]) continue;
      const url = path.replace(/:id\b/g, String(ids[path] ?? chain.run.id)).replace(/:[A-Za-z_]+/g, '1');
      const response = await ctx.request({ method: method as 'POST', url, token: admin.token, payload: {} });
      // A failure here names a mutating route that is neither exempt (EXEMPT_ROUTES, with why) nor of a record kind.
      expect(response.statusCode, `${route}: declare config.changeReason or list it in EXEMPT_ROUTES`).toBe(400);
      const kind = RECORD_KIND_ROUTES[route];
      const error = response.json().error as string;
      if (kind) expect(error, route).toBe(CHANGE_REASON_MESSAGES.required(kind));
      else expect(error, `${route}: declare config.changeReason or list it in EXEMPT_ROUTES`).toMatch(/A reason for change is required for/);
      refusedKinds.add(kind ?? 'declared in config');
    }
    expect([...refusedKinds].filter((kind) => kind !== 'declared in config').sort()).toEqual([...CHANGE_REASON_KINDS].sort());

    // A deletion refused leaves the record; a multipart upload is refused before its file is read.
    const deletion = await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${chain.unitOperation.id}`, token: admin.token });
    expect(deletion.json()).toEqual({ error: CHANGE_REASON_MESSAGES.required('unit_operations') });
    expect((await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${chain.unitOperation.id}`, token: admin.token })).statusCode).toBe(200);
    const boundary = 'reasonless';
    const upload = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${chain.unitOperation.id}/csv-uploads`, token: admin.token,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\ntime,temp\r\n2024-01-01T00:00:00Z,37\r\n--${boundary}--\r\n`,
    });
    expect(upload.statusCode).toBe(400);
    expect(upload.json()).toEqual({ error: CHANGE_REASON_MESSAGES.required('time_series') });
    const jobs = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_jobs');
    expect(jobs.rows[0].n).toBe(0);
  });

  it('takes the reason from the headers, percent-encoded UTF-8, and records it in the audit event, the list and the CSV', async () => {
    const reason = { text: 'Nom mal saisi — corrigé d’après le cahier (p. 12)', code: 'Équipement recalibré' };
    const response = await ctx.request({
      method: 'PUT', url: `/api/v1/runs/${chain.run.id}`, token: admin.token, headers: changeReasonHeaders(reason),
      payload: { facility_id: chain.facility.id, name: 'Run A (renamed)', target: 'Lysozyme' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const [row] = await waitForAuditRows(ctx, `resource_type = 'run' AND action = 'update' AND resource_id = $1`, [String(chain.run.id)]);
    expect(row).toMatchObject({ change_reason: reason.text, change_reason_code: reason.code });

    const list = (await ctx.request({ method: 'GET', url: '/api/v1/audit/logs', token: admin.token })).json() as Array<Record<string, unknown>>;
    expect(list.find((event) => event.resource_type === 'run' && event.action === 'update')).toMatchObject({ change_reason: reason.text, change_reason_code: reason.code });
    const csv = parse((await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=csv', token: admin.token })).body, { columns: true }) as Array<Record<string, string>>;
    expect(csv.find((record) => record.resource_type === 'run' && record.action === 'update' && record.change_reason !== '')).toMatchObject({ change_reason: reason.text, change_reason_code: reason.code });

    // A pick-list entry alone satisfies "required"; so does free text alone.
    const codeOnly = await ctx.request({
      method: 'PUT', url: `/api/v1/runs/${chain.run.id}`, token: admin.token, headers: changeReasonHeaders({ text: null, code: 'Correction' }),
      payload: { facility_id: chain.facility.id, name: 'Run A', target: 'Lysozyme' },
    });
    expect(codeOnly.statusCode).toBe(200);
  });

  it('answers a bad reason with a 400 naming what is wrong, and writes nothing', async () => {
    const attempt = (headers: Record<string, string>) => ctx.request({
      method: 'PUT', url: `/api/v1/runs/${chain.run.id}`, token: admin.token, headers,
      payload: { facility_id: chain.facility.id, name: 'Never stored', target: 'Lysozyme' },
    });
    const unknown = await attempt({ 'x-change-reason-code': 'Because' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({ error: CHANGE_REASON_MESSAGES.unknownCode('Because') });
    const badEncoding = await attempt({ 'x-change-reason': '%E0%A4%A' });
    expect(badEncoding.json()).toEqual({ error: CHANGE_REASON_MESSAGES.badEncoding });
    const tooLong = await attempt({ 'x-change-reason': 'x'.repeat(1001) });
    expect(tooLong.json()).toEqual({ error: CHANGE_REASON_MESSAGES.tooLong });
    const blank = await attempt({ 'x-change-reason': '%20%20' });
    expect(blank.json()).toEqual({ error: CHANGE_REASON_MESSAGES.required('runs') });
    const run = await ctx.request({ method: 'GET', url: `/api/v1/runs/${chain.run.id}`, token: admin.token });
    expect(run.json().name).toBe('Run A');
  });

  it('lets a change through without a reason where the kind is optional or off, and still records one given', async () => {
    const kinds: ChangeReasonKind[] = ['runs'];
    expect((await settings({ policies: Object.fromEntries(kinds.map((kind) => [kind, 'optional'])) })).statusCode).toBe(200);
    const silent = await ctx.request({
      method: 'PUT', url: `/api/v1/runs/${chain.run.id}`, token: admin.token,
      payload: { facility_id: chain.facility.id, name: 'Run A optional', target: 'Lysozyme' },
    });
    expect(silent.statusCode).toBe(200);
    // Facilities are not a kind of the policy: a reason given is kept anyway.
    const facility = await ctx.request({
      method: 'PUT', url: `/api/v1/facilities/${chain.facility.id}`, token: admin.token, headers: changeReasonHeaders({ text: 'Renamed by the site', code: null }),
      payload: { name: 'Pilot hall B', type: 'pilot plant' },
    });
    expect(facility.statusCode, facility.body).toBe(200);
    const [row] = await waitForAuditRows(ctx, `resource_type = 'facility' AND action = 'update' AND resource_id = $1`, [String(chain.facility.id)]);
    expect(row).toMatchObject({ change_reason: 'Renamed by the site', change_reason_code: null });
    expect(CHANGE_REASON_KIND_LABELS.time_series).toBe('Time-series uploads and deletions');
  });
});
