import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATE_RANGE_MESSAGES } from '@bioprocess/shared/date-range';
import { COMMENT_MESSAGES } from '@bioprocess/shared/entities';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { createComment, createEquipment, createFacility, createRun, createUnitOperation, pendingAuditEvents } from './fixtures.ts';
import { createApiKey, createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

describe('comments', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let secondEditor: TestUser;
  let equipmentId: number;
  let facilityId: number;
  let runId: number;
  let unitOperation: { id: number; start_time?: unknown };

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    secondEditor = await ctx.createUser({ organizationId: org.id, role: 'editor' });
    facilityId = (await createFacility(ctx, org.admin.token)).id;
    equipmentId = (await createEquipment(ctx, org.admin.token, facilityId)).id;
    runId = (await createRun(ctx, org.admin.token, facilityId)).id;
    unitOperation = await createUnitOperation(ctx, org.admin.token, runId, equipmentId, { start_time: '2024-03-01T08:00:00Z' });
  });
  afterAll(async () => { await ctx?.close(); });

  it('creates a comment with its author, lists it, updates and deletes it', async () => {
    const created = await createComment(ctx, org.editor.token, unitOperation.id, {
      content: '  DO spike after feed  ', timestamp: '2024-03-01T10:30:00Z', color: '#ff0000',
    });
    expect(created).toMatchObject({
      unit_operations_id: unitOperation.id, run_id: runId, unit_operation_start_time: '2024-03-01T08:00:00.000Z',
      content: 'DO spike after feed', timestamp: '2024-03-01T10:30:00.000Z', author: org.editor.id, author_name: org.editor.name,
      color: '#ff0000', organization_id: org.id,
    });
    expect(typeof created.created_at).toBe('string');
    expect(typeof created.updated_at).toBe('string');

    const perUnitOperation = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperation.id}/comments`, token: org.viewer.token });
    expect(perUnitOperation.statusCode).toBe(200);
    expect(perUnitOperation.json()).toContainEqual(created);

    const updated = await ctx.request({
      method: 'PUT', url: `/api/v1/comments/${created.id}`, token: org.editor.token, payload: { content: 'DO spike after the feed started' },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ content: 'DO spike after the feed started', timestamp: '2024-03-01T10:30:00.000Z', color: '#ff0000' });
    const moved = await ctx.request({
      method: 'PUT', url: `/api/v1/comments/${created.id}`, token: org.editor.token, payload: { content: 'Moved', timestamp: '2024-03-01T11:00:00Z' },
    });
    expect(moved.json()).toMatchObject({ content: 'Moved', timestamp: '2024-03-01T11:00:00.000Z' });

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/comments/${created.id}`, token: org.editor.token })).statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/comments/${created.id}`, token: org.viewer.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: 'Comment not found' });
    await vi.waitFor(async () => {
      const events = (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'comment' && event.resource_id === String(created.id));
      expect(events.map((event) => event.action).sort()).toEqual(['create', 'delete', 'update', 'update']);
      expect(events.every((event) => event.user_id === org.editor.id)).toBe(true);
    });
  });

  it('validates content, timestamp and unit operation', async () => {
    const base = { unit_operations_id: unitOperation.id, timestamp: '2024-03-01T10:30:00Z', content: 'x' };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, content: '   ' }, 400, COMMENT_MESSAGES.contentRequired],
      [{ ...base, content: undefined }, 400, `content: ${COMMENT_MESSAGES.contentRequired}`],
      [{ ...base, unit_operations_id: undefined }, 400, `unit_operations_id: ${COMMENT_MESSAGES.unitOperationRequired}`],
      [{ ...base, timestamp: 'half past ten' }, 400, DATE_RANGE_MESSAGES.invalidFormat],
      [{ ...base, unit_operations_id: 999999 }, 404, 'Unit operation not found'],
    ];
    for (const [payload, status, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/comments', token: org.editor.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    const comment = await createComment(ctx, org.editor.token, unitOperation.id);
    const blank = await ctx.request({ method: 'PUT', url: `/api/v1/comments/${comment.id}`, token: org.editor.token, payload: { content: ' ' } });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toEqual({ error: COMMENT_MESSAGES.contentRequired });
    const badTime = await ctx.request({
      method: 'PUT', url: `/api/v1/comments/${comment.id}`, token: org.editor.token, payload: { content: 'ok', timestamp: 'nope' },
    });
    expect(badTime.json()).toEqual({ error: DATE_RANGE_MESSAGES.invalidFormat });
  });

  it('lets only the author or an admin change or delete a comment', async () => {
    const comment = await createComment(ctx, org.editor.token, unitOperation.id);
    const notAuthor = await Promise.all([
      ctx.request({ method: 'PUT', url: `/api/v1/comments/${comment.id}`, token: secondEditor.token, payload: { content: 'Hijacked' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/comments/${comment.id}`, token: secondEditor.token }),
    ]);
    for (const response of notAuthor) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'Only the author of a comment or an admin may change or delete it.' });
    }
    const viewer = await Promise.all([
      ctx.request({ method: 'POST', url: '/api/v1/comments', token: org.viewer.token, payload: { unit_operations_id: unitOperation.id, timestamp: '2024-03-01T10:00:00Z', content: 'v' } }),
      ctx.request({ method: 'PUT', url: `/api/v1/comments/${comment.id}`, token: org.viewer.token, payload: { content: 'v' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/comments/${comment.id}`, token: org.viewer.token }),
    ]);
    expect(viewer.map((response) => response.statusCode)).toEqual([403, 403, 403]);

    const byAdmin = await ctx.request({ method: 'PUT', url: `/api/v1/comments/${comment.id}`, token: org.admin.token, payload: { content: 'Edited by admin' } });
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json()).toMatchObject({ content: 'Edited by admin', author: org.editor.id });
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/comments/${comment.id}`, token: org.admin.token })).statusCode).toBe(204);
  });

  it('refuses comments from an API key, which has no user to be the author', async () => {
    const key = await createApiKey(ctx, org.id, 'editor');
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/comments', token: key, payload: { unit_operations_id: unitOperation.id, timestamp: '2024-03-01T10:00:00Z', content: 'k' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: 'Comments are written by users: an API key cannot author a comment.' });
    const read = await ctx.request({ method: 'GET', url: '/api/v1/comments', token: key });
    expect(read.statusCode).toBe(200);
  });

  it('hides other organisations comments and unit operations', async () => {
    const comment = await createComment(ctx, org.editor.token, unitOperation.id);
    for (const [method, url] of [['GET', `/api/v1/comments/${comment.id}`], ['PUT', `/api/v1/comments/${comment.id}`], ['DELETE', `/api/v1/comments/${comment.id}`]] as const) {
      const response = await ctx.request({ method, url, token: other.admin.token, ...(method === 'PUT' ? { payload: { content: 'x' } } : {}) });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toEqual({ error: 'Comment not found' });
    }
    const foreignPost = await ctx.request({
      method: 'POST', url: '/api/v1/comments', token: other.admin.token,
      payload: { unit_operations_id: unitOperation.id, timestamp: '2024-03-01T10:00:00Z', content: 'x' },
    });
    expect(foreignPost.statusCode).toBe(404);
    expect(foreignPost.json()).toEqual({ error: 'Unit operation not found' });
    const foreignList = await ctx.request({ method: 'GET', url: '/api/v1/comments', token: other.admin.token });
    expect(foreignList.json()).toEqual([]);
  });

  it('lists the comments of chosen runs and one unit-operation type for the compare screen', async () => {
    const compareOrg = await createOrganisationWithUsers(ctx);
    const facility = await createFacility(ctx, compareOrg.admin.token);
    const equipment = await createEquipment(ctx, compareOrg.admin.token, facility.id);
    const [runA, runB, runC] = [
      await createRun(ctx, compareOrg.admin.token, facility.id, { name: 'A' }),
      await createRun(ctx, compareOrg.admin.token, facility.id, { name: 'B' }),
      await createRun(ctx, compareOrg.admin.token, facility.id, { name: 'C' }),
    ];
    const fermentationA = await createUnitOperation(ctx, compareOrg.admin.token, runA.id, equipment.id, { start_time: '2024-01-01T00:00:00Z', end_time: '2024-01-10T00:00:00Z' });
    const fermentationB = await createUnitOperation(ctx, compareOrg.admin.token, runB.id, equipment.id, { start_time: '2024-02-01T00:00:00Z', end_time: '2024-02-10T00:00:00Z' });
    const fermentationC = await createUnitOperation(ctx, compareOrg.admin.token, runC.id, equipment.id);
    const mixingA = await createUnitOperation(ctx, compareOrg.admin.token, runA.id, equipment.id, { type: 'mixing' });
    const onA = await createComment(ctx, compareOrg.admin.token, fermentationA.id, { content: 'A' });
    const onB = await createComment(ctx, compareOrg.admin.token, fermentationB.id, { content: 'B' });
    await createComment(ctx, compareOrg.admin.token, fermentationC.id, { content: 'C' });
    await createComment(ctx, compareOrg.admin.token, mixingA.id, { content: 'mixing' });

    const compare = await ctx.request({
      method: 'GET', url: `/api/v1/comments?run_ids=${runA.id},${runB.id}&type=fermentation`, token: compareOrg.viewer.token,
    });
    expect(compare.statusCode).toBe(200);
    const body = compare.json() as Array<{ id: number; run_id: number; unit_operation_start_time: string | null }>;
    expect(body.map((c) => c.id).sort((a, b) => a - b)).toEqual([onA.id, onB.id]);
    expect(body.find((c) => c.id === onA.id)).toMatchObject({ run_id: runA.id, unit_operation_start_time: '2024-01-01T00:00:00.000Z' });
    expect(body.find((c) => c.id === onB.id)).toMatchObject({ run_id: runB.id, unit_operation_start_time: '2024-02-01T00:00:00.000Z' });
    expect(compare.headers['x-total-count']).toBe('2');

    const all = await ctx.request({ method: 'GET', url: '/api/v1/comments', token: compareOrg.viewer.token });
    expect(all.json()).toHaveLength(4);
    expect(all.headers['x-total-count']).toBe('4');
    const page = await ctx.request({ method: 'GET', url: '/api/v1/comments?limit=1&offset=1', token: compareOrg.viewer.token });
    expect(page.json()).toHaveLength(1);
    expect(page.headers['x-total-count']).toBe('4');

    const bad = await ctx.request({ method: 'GET', url: '/api/v1/comments?run_ids=1;2', token: compareOrg.viewer.token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'querystring.run_ids: run_ids must be a comma-separated list of run ids' });
  });
});
