/**
 * Electronic signatures and run review through the real HTTP server and PostgreSQL: signing proves
 * the signer, binds the signature to the run's content hash (a change made behind the api's back
 * shows it invalid), the review lock refuses every kind of change with 409 naming the state,
 * reopening needs a reason and revokes (keeps) the signatures, and the review report lists the
 * changes, deletions, review steps and signatures as JSON, CSV and PDF.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVIEW_MESSAGES } from '@bioprocess/shared/run-review';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { createApiKey } from '../support/fixtures.ts';
import { multipartBody } from '../support/ingest.ts';
import { createEquipment, createFacility, createInstrument, createRun, createUnitOperation } from '../metadata/fixtures.ts';

const PASSWORD = 'Correct-Horse-Battery-9';

describe('run review and electronic signatures', () => {
  let ctx: TestContext;
  let organizationId: number;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let facilityId: number;
  let equipmentId: number;
  let instrumentId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization();
    admin = await ctx.createUser({ organizationId, role: 'admin', password: PASSWORD });
    editor = await ctx.createUser({ organizationId, role: 'editor', password: PASSWORD });
    viewer = await ctx.createUser({ organizationId, role: 'viewer' });
    facilityId = (await createFacility(ctx, admin.token)).id;
    equipmentId = (await createEquipment(ctx, admin.token, facilityId)).id;
    instrumentId = (await createInstrument(ctx, admin.token, equipmentId)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  const review = (runId: number, token: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'POST', url: `/api/v1/runs/${runId}/review`, token, payload });
  const sign = (runId: number, token: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'POST', url: `/api/v1/runs/${runId}/signatures`, token, payload });
  const readReview = async (runId: number, token = viewer.token) =>
    (await ctx.request({ method: 'GET', url: `/api/v1/runs/${runId}/review`, token })).json();
  const setReauthMinutes = async (minutes: number) => {
    const response = await ctx.request({
      method: 'PUT', url: '/api/v1/session-policy', token: admin.token, payload: { inactivity_minutes: 30, signing_reauth_minutes: minutes },
    });
    expect(response.statusCode, response.body).toBe(200);
  };

  async function seededRun(name: string) {
    const run = await createRun(ctx, editor.token, facilityId, { name, start_time: '2024-03-01T00:00:00Z' });
    const unitOperation = await createUnitOperation(ctx, editor.token, run.id, equipmentId, {
      start_time: `2024-03-0${1 + (run.id % 8)}T00:00:00Z`, end_time: `2024-03-0${1 + (run.id % 8)}T12:00:00Z`,
    });
    const samples = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${unitOperation.id}/samples`, token: editor.token,
      payload: { samples: [{ sample_id: 'S-01', drawn_at: unitOperation.start_time, results: [{ analyte: 'Glucose', value: 4.2, unit: 'g/L' }] }] },
    });
    expect(samples.statusCode, samples.body).toBe(200);
    return { run, unitOperation, sampleRowId: samples.json()[0].id as number };
  }

  it('takes a run through review with two signers, locks it, and reopens it with a reason that revokes the signatures', async () => {
    await setReauthMinutes(5);
    const { run, unitOperation, sampleRowId } = await seededRun('Review walk');

    // Signed in moments ago: the author signs without the password.
    const authored = await sign(run.id, editor.token, { meaning: 'authored' });
    expect(authored.statusCode, authored.body).toBe(201);
    expect(authored.json()).toMatchObject({
      meaning: 'authored', meaning_label: 'Authored', signer_name: editor.name, authentication: 'recent_sign_in', validity: 'valid',
      time_zone: 'UTC',
    });
    expect(authored.json().signed_at_local).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC \(UTC\+00:00\)$/);
    expect((await review(run.id, editor.token, { action: 'submit' })).json()).toMatchObject({ state: 'in_review', state_label: 'In review' });

    // Every kind of change is refused while the run is in review, naming the state.
    const locked = `Run "Review walk" is In review: it cannot be changed until it is reopened with a reason`;
    const csv = multipartBody({ mapping: JSON.stringify({ timestamp_column: 'time', columns: [{ column: 'T', instrument_id: instrumentId }] }) },
      { name: 'late.csv', content: 'time,T\n2024-03-01T01:00:00Z,37\n' });
    const attempts = [
      { method: 'PUT', url: `/api/v1/runs/${run.id}`, payload: { name: 'Renamed' } },
      { method: 'DELETE', url: `/api/v1/runs/${run.id}` },
      { method: 'POST', url: '/api/v1/unit-operations', payload: { run_id: run.id, type: 'fermentation', equipment_id: equipmentId } },
      { method: 'PUT', url: `/api/v1/unit-operations/${unitOperation.id}`, payload: { properties: { working_volume: 2 } } },
      { method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation.id}` },
      { method: 'PUT', url: `/api/v1/unit-operations/${unitOperation.id}/samples`, payload: { samples: [], delete_ids: [sampleRowId] } },
      { method: 'PATCH', url: `/api/v1/samples/${sampleRowId}`, payload: { notes: 'late note' } },
      { method: 'DELETE', url: `/api/v1/samples/${sampleRowId}` },
      { method: 'DELETE', url: '/api/v1/time-series-data', payload: { instrument_ids: [instrumentId], start_time: unitOperation.start_time, end_time: unitOperation.end_time } },
      { method: 'POST', url: `/api/v1/unit-operations/${unitOperation.id}/csv-uploads`, payload: csv.body, headers: { 'content-type': csv.contentType } },
    ] as const;
    for (const attempt of attempts) {
      const response = await ctx.request({ ...attempt, token: editor.token } as Parameters<TestContext['request']>[0]);
      expect({ call: `${attempt.method} ${attempt.url}`, status: response.statusCode, body: response.json() })
        .toEqual({ call: `${attempt.method} ${attempt.url}`, status: 409, body: { error: locked } });
    }
    const { rows: jobs } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_jobs');
    expect(jobs[0].n).toBe(0);

    // Approval needs the admin role, and the password once the sign-in is older than the window.
    expect((await review(run.id, editor.token, { action: 'approve', password: PASSWORD })).statusCode).toBe(403);
    await setReauthMinutes(0);
    const withoutPassword = await review(run.id, admin.token, { action: 'approve' });
    expect(withoutPassword.statusCode).toBe(400);
    expect(withoutPassword.json()).toEqual({ error: REVIEW_MESSAGES.passwordRequired });
    const wrongPassword = await review(run.id, admin.token, { action: 'approve', password: 'not-it' });
    expect(wrongPassword.statusCode).toBe(403);
    expect(wrongPassword.json()).toEqual({ error: REVIEW_MESSAGES.passwordWrong });
    expect((await readReview(run.id)).state).toBe('in_review');
    const approved = await review(run.id, admin.token, { action: 'approve', password: PASSWORD });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().state).toBe('approved');
    expect(approved.json().signatures.map((signature: { meaning: string; validity: string; signer_name: string; authentication: string }) =>
      [signature.meaning, signature.validity, signature.signer_name, signature.authentication]))
      .toEqual([['authored', 'valid', editor.name, 'recent_sign_in'], ['approved', 'valid', admin.name, 'password']]);
    expect((await ctx.request({ method: 'PUT', url: `/api/v1/runs/${run.id}`, token: admin.token, payload: { name: 'x' } })).json())
      .toEqual({ error: `Run "Review walk" is Approved: it cannot be changed until it is reopened with a reason` });

    // Reopening: the reason is required; the signatures stay, revoked.
    expect((await review(run.id, editor.token, { action: 'reopen', reason: 'Wrong feed rate' })).statusCode).toBe(403);
    const noReason = await review(run.id, admin.token, { action: 'reopen' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json()).toEqual({ error: REVIEW_MESSAGES.reasonRequired });
    const reopened = await review(run.id, admin.token, { action: 'reopen', reason: 'Wrong feed rate entered' });
    expect(reopened.json().state).toBe('draft');
    expect(reopened.json().signatures.map((signature: { validity: string; revoke_reason: string }) => [signature.validity, signature.revoke_reason]))
      .toEqual([['revoked', 'Wrong feed rate entered'], ['revoked', 'Wrong feed rate entered']]);
    const { rows: kept } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM signatures WHERE record_id = $1', [run.id]);
    expect(kept[0].n).toBe(2);

    // Draft again: changes go through, and the report shows them with the review steps and signatures.
    expect((await ctx.request({
      method: 'PUT', url: `/api/v1/runs/${run.id}`, token: editor.token, payload: { name: 'Review walk 2' }, headers: { 'x-change-reason': 'Name agreed with QA' },
    })).statusCode).toBe(200);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/samples/${sampleRowId}`, token: editor.token })).statusCode).toBe(204);
    const report = (await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review-report`, token: viewer.token })).json();
    const kinds = report.entries.map((entry: { kind: string; field: string | null; detail: string | null }) => `${entry.kind}:${entry.field ?? entry.detail}`);
    expect(kinds).toEqual([
      'signature:Authored', 'review:review state', 'signature:Approved', 'review:review state', 'review:review state', 'change:name', 'deletion:deleted',
    ]);
    expect(report.entries.find((entry: { kind: string }) => entry.kind === 'change'))
      .toMatchObject({ old_value: 'Review walk', new_value: 'Review walk 2', who: editor.email, record: 'Run Review walk 2', reason: 'Name agreed with QA' });
    expect(report.entries[4]).toMatchObject({ old_value: 'Approved', new_value: 'Draft', reason: 'Wrong feed rate entered', detail: 'reopen' });
    expect(report.entries.find((entry: { kind: string }) => entry.kind === 'deletion').record).toBe(`Sample S-01 (unit operation #${unitOperation.id})`);

    const csvReport = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review-report?format=csv`, token: viewer.token });
    expect(csvReport.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csvReport.headers['content-disposition']).toBe('attachment; filename="review-report-Review_walk_2.csv"');
    const lines = csvReport.body.trim().split('\r\n');
    expect(lines[0]).toBe('kind,at,at_local,who,record,field,old_value,new_value,reason,detail');
    expect(lines).toHaveLength(1 + report.entries.length);
    expect(lines.find((line) => line.startsWith('change,'))).toContain(',name,Review walk,Review walk 2,Name agreed with QA,');
    const pdf = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review-report?format=pdf`, token: viewer.token });
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect((await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review-report?format=xml`, token: viewer.token })).json())
      .toEqual({ error: expect.stringContaining('format') });

    // The record export carries the run's review state and its signatures.
    const exported = (await ctx.request({ method: 'GET', url: '/api/v1/exports/records?entity=runs&format=json', token: editor.token })).json();
    const row = exported.find((record: { id: number }) => record.id === run.id);
    expect(row.review_state).toBe('draft');
    expect(row.signatures).toMatch(new RegExp(`^Authored: ${editor.name}, \\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z \\(revoked\\), sha256 [0-9a-f]{64}; Approved: ${admin.name}, `));
  });

  it('binds a signature to the exact content: a change made behind the api shows it invalid, and another run never matches', async () => {
    await setReauthMinutes(5);
    const first = await seededRun('Twin');
    const second = await seededRun('Twin');
    const signature = (await sign(first.run.id, editor.token, { meaning: 'reviewed' })).json();
    const other = (await sign(second.run.id, editor.token, { meaning: 'reviewed' })).json();
    expect(signature.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(other.content_sha256).not.toBe(signature.content_sha256);
    expect((await readReview(first.run.id)).signatures[0].validity).toBe('valid');

    // A sample result changed directly in the database: the signature no longer holds.
    await ctx.deps.pg.query('UPDATE sample_results SET value = 4.3 WHERE sample_row_id = $1', [first.sampleRowId]);
    const after = await readReview(first.run.id);
    expect(after.signatures[0].validity).toBe('invalid');
    expect(after.content_sha256).not.toBe(signature.content_sha256);
    // Copying the row onto the other run does not make it valid there.
    await ctx.deps.pg.query('UPDATE signatures SET record_id = $1 WHERE id = $2', [second.run.id, signature.id]);
    const moved = (await readReview(second.run.id)).signatures.find((row: { id: number }) => row.id === signature.id);
    expect(moved.validity).toBe('invalid');
    // Changing the value back restores the signed content, and the hash with it.
    await ctx.deps.pg.query('UPDATE signatures SET record_id = $1 WHERE id = $2', [first.run.id, signature.id]);
    await ctx.deps.pg.query('UPDATE sample_results SET value = 4.2 WHERE sample_row_id = $1', [first.sampleRowId]);
    expect((await readReview(first.run.id)).signatures[0].validity).toBe('valid');
  });

  it('refuses signers who are not people or cannot edit, unknown meanings, and transitions from the wrong state', async () => {
    await setReauthMinutes(5);
    const { run } = await seededRun('Roles');
    expect((await sign(run.id, viewer.token, { meaning: 'authored' })).statusCode).toBe(403);
    const key = await createApiKey(ctx, organizationId, 'editor');
    expect((await sign(run.id, key, { meaning: 'authored' })).json()).toEqual({ error: 'Signatures are given by people: sign in to sign' });
    expect((await sign(run.id, editor.token, { meaning: 'witnessed' })).json()).toEqual({ error: "meaning: unknown signature meaning 'witnessed'" });
    const meanings = await ctx.request({
      method: 'PUT', url: '/api/v1/signature-meanings', token: admin.token, payload: { meanings: [{ code: 'witnessed', label: 'Witnessed' }] },
    });
    expect(meanings.statusCode, meanings.body).toBe(200);
    expect((await sign(run.id, editor.token, { meaning: 'witnessed' })).json()).toMatchObject({ meaning_label: 'Witnessed', validity: 'valid' });
    expect((await ctx.request({
      method: 'PUT', url: '/api/v1/signature-meanings', token: admin.token, payload: { meanings: [{ code: 'approved', label: 'Mine' }] },
    })).json()).toEqual({ error: "meanings.0.code: 'approved' is a built-in meaning" });
    // A reopening's reason code must be one of the organisation's reasons for change.
    expect((await review(run.id, admin.token, { action: 'reopen', reason_code: 'Typo' })).json())
      .toEqual({ error: "reason: 'Typo' is not one of the organisation's reasons for change" });
    const approveDraft = await review(run.id, admin.token, { action: 'approve', password: PASSWORD });
    expect(approveDraft.statusCode).toBe(409);
    expect(approveDraft.json()).toEqual({ error: 'Run "Roles" is Draft: approve needs it In review' });
    const foreignOrganization = await ctx.createOrganization();
    const stranger = await ctx.createUser({ organizationId: foreignOrganization, role: 'admin' });
    expect((await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review`, token: stranger.token })).statusCode).toBe(404);
    expect((await review(run.id, stranger.token, { action: 'submit' })).statusCode).toBe(404);
  });
});
