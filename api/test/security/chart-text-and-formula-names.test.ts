/**
 * Two ways data once reached the console as something other than text, through the real api,
 * PostgreSQL, ingest-worker and ClickHouse:
 * - a comment's colour is drawn into chart markup (a style attribute), so the api takes only hex
 *   colours and never hands back a stored colour that is not one;
 * - the formula language looked names up on plain objects, so the names every JavaScript object has
 *   (constructor, toString, __proto__, hasOwnProperty, valueOf) were functions: formulas saved that
 *   then answered 500 or never evaluated. They are unknown names now, a 400 that names them, at
 *   saving, at the preview and when a formula stored before this is drawn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';
import { createEquipment, createFacility, createInstrument, createRun, createUnitOperation, post } from '../metadata/fixtures.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';

const INHERITED_NAMES = ['hasOwnProperty', 'constructor', '__proto__', 'valueOf', 'toString'];
const HOSTILE_COLORS = [
  'red" onmouseover="alert(1)', '#fff"><a href="//example.com" id="evil">x</a>', 'url(//example.com/x.png)',
  'expression(alert(1))', 'javascript:alert(1)', 'red', '#12345', '#1234567', '#ggg', '<img src=x onerror=alert(1)>',
];
const T0 = Date.UTC(2025, 2, 3, 8);
const MINUTE = 60_000;

describe('chart text from data and names in formulas', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let org: Organisation;
  let unitOperationId: number;

  async function commentCount(): Promise<number> {
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM comments WHERE organization_id = $1', [org.id]);
    return rows[0].n as number;
  }

  async function derivedCount(): Promise<number> {
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM derived_parameters WHERE organization_id = $1', [org.id]);
    return rows[0].n as number;
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    org = await createOrganisationWithUsers(ctx);
    const facility = await createFacility(ctx, org.admin.token);
    const equipment = await createEquipment(ctx, org.admin.token, facility.id);
    const instrument = await createInstrument(ctx, org.admin.token, equipment.id, { name: 'Probe', alias: 'probe' });
    const run = await createRun(ctx, org.admin.token, facility.id);
    unitOperationId = (await createUnitOperation(ctx, org.admin.token, run.id, equipment.id, {
      start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 59 * MINUTE).toISOString(),
    })).id;
    const data = Array.from({ length: 60 }, (_, i) => ({ ts: new Date(T0 + i * MINUTE).toISOString(), instrument_id: instrument.id, value: 30 + i / 10 }));
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: org.editor.token, payload: { data } });
    expect(posted.statusCode, posted.body).toBe(200);
  });

  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  describe('comment colours', () => {
    it('refuses anything but a hex colour, naming the field, and writes nothing', async () => {
      const before = await commentCount();
      for (const color of HOSTILE_COLORS) {
        const response = await ctx.request({
          method: 'POST', url: '/api/v1/comments', token: org.editor.token,
          payload: { unit_operations_id: unitOperationId, timestamp: new Date(T0 + MINUTE).toISOString(), content: 'Feed', color },
        });
        expect(response.statusCode, color).toBe(400);
        expect(response.json().error, color).toMatch(/^color: Color must be/);
      }
      expect(await commentCount()).toBe(before);
    });

    it('takes #rgb and #rrggbb in either case, and an empty colour as none', async () => {
      for (const color of ['#f00', '#2D72D2', '#2d72d2']) {
        const created = await post(ctx, org.editor.token, '/api/v1/comments', {
          unit_operations_id: unitOperationId, timestamp: new Date(T0 + MINUTE).toISOString(), content: 'Feed', color,
        });
        expect(created.color).toBe(color);
      }
      const none = await post(ctx, org.editor.token, '/api/v1/comments', {
        unit_operations_id: unitOperationId, timestamp: new Date(T0 + MINUTE).toISOString(), content: 'Feed', color: '',
      });
      expect(none.color).toBeNull();
    });

    it('refuses a hostile colour on edit and keeps the comment as it was', async () => {
      const created = await post(ctx, org.editor.token, '/api/v1/comments', {
        unit_operations_id: unitOperationId, timestamp: new Date(T0 + 2 * MINUTE).toISOString(), content: 'Induced', color: '#00f',
      });
      for (const color of HOSTILE_COLORS) {
        const response = await ctx.request({
          method: 'PUT', url: `/api/v1/comments/${created.id}`, token: org.editor.token, payload: { content: 'Changed', color },
        });
        expect(response.statusCode, color).toBe(400);
        expect(response.json().error, color).toMatch(/^color: Color must be/);
      }
      const { rows } = await ctx.deps.pg.query('SELECT content, color FROM comments WHERE id = $1', [created.id]);
      expect(rows[0]).toEqual({ content: 'Induced', color: '#00f' });
    });

    it('hands back a colour stored before the rule as no colour at all', async () => {
      const created = await post(ctx, org.editor.token, '/api/v1/comments', {
        unit_operations_id: unitOperationId, timestamp: new Date(T0 + 3 * MINUTE).toISOString(), content: 'Old one',
      });
      await ctx.deps.pg.query('UPDATE comments SET color = $2 WHERE id = $1', [created.id, 'red" onmouseover="x']);
      const one = await ctx.request({ method: 'GET', url: `/api/v1/comments/${created.id}`, token: org.viewer.token });
      expect(one.json().color).toBeNull();
      const listed = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/comments`, token: org.viewer.token });
      expect(listed.json().find((comment: { id: number }) => comment.id === created.id).color).toBeNull();
      const all = await ctx.request({ method: 'GET', url: '/api/v1/comments', token: org.viewer.token });
      expect(all.json().find((comment: { id: number }) => comment.id === created.id).color).toBeNull();
    });
  });

  describe('names in formulas', () => {
    const asFunctions = (name: string) => [`${name}([probe], 'h')`, `${name}([probe], '10min')`, `${name}([probe])`, `${name}(1)`];
    const asVariables = (name: string) => [`${name}`, `[probe] * ${name}`];

    it('refuses an inherited name as a function or a variable when saving, naming it, and saves nothing', async () => {
      const before = await derivedCount();
      for (const name of INHERITED_NAMES) {
        for (const expression of [...asFunctions(name), ...asVariables(name)]) {
          const response = await ctx.request({
            method: 'POST', url: '/api/v1/derived-parameters', token: org.editor.token, payload: { name: `F ${expression}`, expression },
          });
          expect(response.statusCode, expression).toBe(400);
          expect(response.json().error, expression).toContain(`Unknown ${expression.includes('(') ? 'function' : 'name'} ${name}`);
        }
      }
      expect(await derivedCount()).toBe(before);

      const saved = await post(ctx, org.editor.token, '/api/v1/derived-parameters', { name: 'Probe doubled', expression: '[probe] * 2' });
      for (const name of INHERITED_NAMES) {
        const response = await ctx.request({
          method: 'PUT', url: `/api/v1/derived-parameters/${saved.id}`, token: org.editor.token, payload: { expression: `${name}([probe], 'h')` },
        });
        expect(response.statusCode, name).toBe(400);
        expect(response.json().error, name).toContain(`Unknown function ${name}`);
      }
      const { rows } = await ctx.deps.pg.query('SELECT expression, version FROM derived_parameters WHERE id = $1', [saved.id]);
      expect(rows[0]).toEqual({ expression: '[probe] * 2', version: 1 });
    });

    it('answers the preview of an inherited name with a 400 naming it', async () => {
      for (const name of INHERITED_NAMES) {
        for (const expression of [...asFunctions(name), ...asVariables(name)]) {
          const response = await ctx.request({
            method: 'POST', url: '/api/v1/derived-parameters/preview', token: org.viewer.token, payload: { expression, unit_operation_id: unitOperationId },
          });
          expect(response.statusCode, expression).toBe(400);
          expect(response.json().error, expression).toMatch(new RegExp(`Unknown (function|name) ${name.replace(/\$/g, '\\$')}`));
        }
      }
    });

    it('answers a formula stored before the rule with a 400 naming the function, never a 500', async () => {
      const saved = await post(ctx, org.editor.token, '/api/v1/derived-parameters', { name: 'Stored before', expression: '[probe] + 1' });
      const drawn = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${saved.id}`, token: org.viewer.token });
      expect(drawn.statusCode, drawn.body).toBe(200);
      expect(drawn.json().points).toHaveLength(60);
      for (const name of INHERITED_NAMES) {
        for (const expression of asFunctions(name)) {
          await ctx.deps.pg.query('UPDATE derived_parameters SET expression = $2 WHERE id = $1', [saved.id, expression]);
          const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${saved.id}`, token: org.viewer.token });
          expect(response.statusCode, expression).toBe(400);
          expect(response.json().error, expression).toContain(`Unknown function ${name}`);
        }
      }
    });
  });
});
