/**
 * Records export: each entity as CSV (neutralised against spreadsheet formulas, numbers as numbers)
 * and as JSON, only the caller's organisation, editors and admins only, audited with its row count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { RECORD_EXPORT_ENTITIES } from '@bioprocess/shared/exports';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { recordColumnNames } from '../../src/exports/records.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';

describe('records export', () => {
  let ctx: TestContext;
  let plant: Plant;
  let other: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 2);
    other = await createPlant(ctx, 1);
    for (const [organizationId, name] of [[plant.organizationId, '=HYPERLINK("http://evil.test","x")'], [plant.organizationId, 'Plain, "quoted" run'], [other.organizationId, 'Foreign run']] as const) {
      await ctx.deps.pg.query(
        `INSERT INTO runs (organization_id, facility_id, name, target, scale_liters)
         SELECT $1, f.id, $2, '-titer', -0 + 2.5 FROM facilities f WHERE f.organization_id = $1 LIMIT 1`, [organizationId, name]);
    }
  });
  afterAll(async () => {
    await ctx.close();
  });

  const get = (token: string, query: string) => ctx.request({ method: 'GET', url: `/api/v1/exports/records?${query}`, token });

  it('writes runs as neutralised CSV of the caller organisation only', async () => {
    const response = await get(plant.editor.token, 'entity=runs&format=csv');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="runs-\d{4}-\d{2}-\d{2}\.csv"$/);
    const [header, ...rows] = parse(response.body) as string[][];
    expect(header).toEqual(recordColumnNames('runs'));
    expect(rows.map((row) => row[2])).toEqual([`'=HYPERLINK("http://evil.test","x")`, 'Plain, "quoted" run']);
    expect(rows.every((row) => row[4] === "'-titer")).toBe(true);
    expect(response.body).toContain(',2.5,');
    expect(response.body).not.toContain('Foreign run');
  });

  it('keeps the microseconds PostgreSQL stores in every timestamp, in CSV and JSON', async () => {
    // The api takes times to the millisecond; a row written with microseconds (another client, a
    // migration) must not lose them on the way out, as a JavaScript Date would.
    await ctx.deps.pg.query(
      `UPDATE runs SET start_time = '2021-05-02T07:12:51.123456Z', end_time = NULL WHERE organization_id = $1 AND name = 'Plain, "quoted" run'`, [plant.organizationId]);
    const csv = await get(plant.editor.token, 'entity=runs&format=csv');
    const [header, ...rows] = parse(csv.body) as string[][];
    const row = rows.find((cells) => cells[header!.indexOf('name')] === 'Plain, "quoted" run')!;
    expect(row[header!.indexOf('start_time')]).toBe('2021-05-02T07:12:51.123456Z');
    expect(row[header!.indexOf('end_time')]).toBe('');
    expect(row[header!.indexOf('created_at')]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const records = (await get(plant.editor.token, 'entity=runs&format=json')).json() as Array<{ name: string; start_time: string | null }>;
    expect(records.find((record) => record.name === 'Plain, "quoted" run')?.start_time).toBe('2021-05-02T07:12:51.123456Z');
  });

  it('writes every entity as CSV and JSON with the same rows', async () => {
    for (const entity of RECORD_EXPORT_ENTITIES) {
      const csv = await get(plant.editor.token, `entity=${entity}&format=csv`);
      const json = await get(plant.editor.token, `entity=${entity}&format=json`);
      expect(csv.statusCode, entity).toBe(200);
      expect(json.statusCode, entity).toBe(200);
      const records = json.json() as Array<Record<string, unknown>>;
      expect((parse(csv.body) as string[][]).length - 1, entity).toBe(records.length);
      for (const record of records) expect(Object.keys(record), entity).toEqual(recordColumnNames(entity));
    }
    const instruments = (await get(plant.editor.token, 'entity=instruments&format=json')).json() as Array<{ id: number }>;
    expect(instruments.map((instrument) => instrument.id)).toEqual(plant.instrumentIds);
  });

  it('refuses viewers, unknown entities and formats; audits what was exported', async () => {
    expect((await get(plant.viewer.token, 'entity=runs')).statusCode).toBe(403);
    for (const query of ['entity=users', 'entity=runs&format=xml', '']) {
      const response = await get(plant.editor.token, query);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toEqual({ error: expect.any(String) });
    }
    await get(plant.editor.token, 'entity=runs&format=json');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const events = (await pendingAuditEvents(ctx)) as Array<Record<string, unknown>>;
    expect(events.filter((event) => event.event_type === 'records.exported').at(-1)).toMatchObject({
      action: 'export', resource_type: 'runs', user_id: plant.editor.id, success: true,
      changes: { after: { entity: 'runs', format: 'json', rows: 2, complete: true } },
    });
  });
});
