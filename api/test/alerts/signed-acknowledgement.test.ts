/**
 * Acknowledgements signed where the organisation requires it, through the real HTTP routes against
 * PostgreSQL: the setting (read by members, changed by admins, audited), the acknowledgement without it
 * (a comment, as before), and with it (password required, a wrong one refused with nothing recorded, a
 * right one recording a Reviewed signature bound to the firing that verifies, and goes invalid when the
 * firing's acknowledged facts are changed behind the api's back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_MESSAGES, type AlertEvent } from '@bioprocess/shared/alerts';
import { createApiKey, createTestContext, type TestContext, type TestUser } from '../support/index.ts';
import { alertAcknowledgementHash } from '../../src/alerts/acknowledgement-content.ts';

const PASSWORD = 'Signing-Password-2026!';
const SETTING_PATH = '/api/v1/organization-settings/alert-acknowledgements';

describe('signed alert acknowledgements', () => {
  let ctx: TestContext;
  let organizationId: number;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let ruleId: number;
  let instrumentId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization('Signing plant');
    admin = await ctx.createUser({ organizationId, role: 'admin', password: PASSWORD });
    editor = await ctx.createUser({ organizationId, role: 'editor', password: PASSWORD });
    viewer = await ctx.createUser({ organizationId, role: 'viewer', password: PASSWORD });
    outsider = await ctx.createUser({ organizationId: await ctx.createOrganization('Other plant'), role: 'admin', password: PASSWORD });
    const { rows: [instrument] } = await ctx.deps.pg.query(
      `WITH f AS (INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Hall', 'pilot plant') RETURNING id),
            q AS (INSERT INTO equipment (organization_id, facility_id, name, type) SELECT $1, f.id, 'Reactor 1', 'bioreactor' FROM f RETURNING id)
       INSERT INTO instruments (organization_id, equipment_id, name, type, unit) SELECT $1, q.id, 'Probe 1', 'temperature', 'celsius' FROM q RETURNING id`,
      [organizationId]);
    instrumentId = Number(instrument.id);
    const rule = await ctx.request({
      method: 'POST', url: '/api/v1/alert-rules', token: editor.token,
      payload: { name: 'Too hot', instrument_type: 'temperature', condition: { kind: 'threshold', direction: 'above', value: 40 } },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    ruleId = rule.json().id as number;
  });

  afterAll(async () => { await ctx?.close(); });

  /** A firing as the evaluator records one (resolved, so several can exist for the one series). */
  async function firing(value = 41.5): Promise<number> {
    const { rows } = await ctx.deps.pg.query(
      `INSERT INTO alert_events (organization_id, rule_id, instrument_id, started_at, fired_at, resolved_at, value, message)
       VALUES ($1, $2, $3, now() - interval '2 minutes', now() - interval '1 minute', now(), $4, 'Probe 1 above 40') RETURNING id`,
      [organizationId, ruleId, instrumentId, value]);
    return Number(rows[0].id);
  }

  const acknowledge = (id: number, token: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'POST', url: `/api/v1/alert-events/${id}/acknowledge`, token, payload });

  /** Audit events of a resource, whether still in the outbox or already stored by the audit worker. */
  async function auditEvents(resourceType: string, resourceId: number): Promise<Array<{ event_type: string; action: string; success: boolean; changes: { before?: unknown; after: Record<string, unknown> } }>> {
    const { rows } = await ctx.deps.pg.query(
      `SELECT event->>'event_type' AS event_type, event->>'action' AS action, (event->>'success')::boolean AS success, event->'changes' AS changes
         FROM audit_outbox WHERE event->>'resource_type' = $1 AND event->>'resource_id' = $2
       UNION ALL
       SELECT event_type, action, success, changes FROM audit_logs WHERE resource_type = $1 AND resource_id = $2`,
      [resourceType, String(resourceId)]);
    return rows;
  }

  it('acknowledges with a comment only while the organisation does not require a signature', async () => {
    const setting = await ctx.request({ method: 'GET', url: SETTING_PATH, token: viewer.token });
    expect(setting.statusCode).toBe(200);
    expect(setting.json()).toEqual({ requires_signature: false });
    const id = await firing();
    const answer = await acknowledge(id, editor.token, { comment: 'Seen, probe recalibrated' });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ acknowledgement: 'Seen, probe recalibrated', acknowledged_by: editor.id, acknowledgement_signature: null });
    expect((await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM signatures WHERE record_type = 'alert_event'`)).rows[0].n).toBe(0);
    const [audited] = (await auditEvents('alert_event', id)).filter((event) => event.action === 'acknowledge');
    expect(audited!.changes.after).toMatchObject({ acknowledgement: 'Seen, probe recalibrated', signature_id: null });
  });

  it('lets only admins change the setting, validates it and audits the change', async () => {
    for (const user of [viewer, editor]) {
      const refused = await ctx.request({ method: 'PUT', url: SETTING_PATH, token: user.token, payload: { requires_signature: true } });
      expect(refused.statusCode).toBe(403);
    }
    const bad = await ctx.request({ method: 'PUT', url: SETTING_PATH, token: admin.token, payload: { requires_signature: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toContain('requires_signature');
    const on = await ctx.request({ method: 'PUT', url: SETTING_PATH, token: admin.token, payload: { requires_signature: true } });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json()).toEqual({ requires_signature: true });
    expect((await ctx.request({ method: 'GET', url: SETTING_PATH, token: editor.token })).json()).toEqual({ requires_signature: true });
    // Another organisation's setting is its own.
    expect((await ctx.request({ method: 'GET', url: SETTING_PATH, token: outsider.token })).json()).toEqual({ requires_signature: false });
    const changes = (await auditEvents('organization', organizationId)).filter((event) => event.event_type === 'organization.alert_acknowledgement_settings_updated');
    expect(changes.map((event) => event.changes)).toEqual([{ before: { requires_signature: false }, after: { requires_signature: true } }]);
  });

  it('with the setting on, refuses an acknowledgement without the password or with a wrong one, and records nothing', async () => {
    const id = await firing();
    const missing = await acknowledge(id, editor.token, { comment: 'Seen' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: ALERT_MESSAGES.acknowledgementPasswordRequired });
    const wrong = await acknowledge(id, editor.token, { comment: 'Seen', password: 'not-the-password' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toEqual({ error: ALERT_MESSAGES.acknowledgementPasswordWrong });
    const byViewer = await acknowledge(id, viewer.token, { comment: 'Seen', password: PASSWORD });
    expect(byViewer.statusCode).toBe(403);
    const byOutsider = await acknowledge(id, outsider.token, { comment: 'Seen', password: PASSWORD });
    expect(byOutsider.statusCode).toBe(404);
    const apiKey = await createApiKey(ctx, organizationId, 'editor');
    expect((await acknowledge(id, apiKey, { comment: 'Seen', password: PASSWORD })).statusCode).toBe(403);

    const event = (await ctx.request({ method: 'GET', url: `/api/v1/alert-events/${id}`, token: viewer.token })).json() as AlertEvent;
    expect(event).toMatchObject({ acknowledged_at: null, acknowledgement: null, acknowledgement_signature: null });
    expect((await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM signatures WHERE record_type = 'alert_event'`)).rows[0].n).toBe(0);
    const audited = await auditEvents('alert_event', id);
    expect(audited.map((entry) => [entry.event_type, entry.success, entry.changes.after.reason])).toEqual([['signature.failed', false, 'wrong_password']]);
  });

  it('with the setting on, records a Reviewed signature bound to the acknowledged firing that verifies, audited with its id', async () => {
    const id = await firing(42.25);
    const answer = await acknowledge(id, editor.token, { comment: 'Cooling water restored', password: PASSWORD });
    expect(answer.statusCode, answer.body).toBe(200);
    const event = answer.json() as AlertEvent;
    const signature = event.acknowledgement_signature!;
    expect(signature).toMatchObject({
      record_type: 'alert_event', record_id: id, meaning: 'reviewed', meaning_label: 'Reviewed', signer_id: editor.id, signer_name: editor.name,
      signer_email: editor.email, authentication: 'password', validity: 'valid', revoked_at: null, time_zone: 'UTC',
    });
    expect(signature.signed_at_local).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(signature.content_sha256).toBe(alertAcknowledgementHash(event));

    // Read again, in the list and alone, it still verifies.
    const listed = (await ctx.request({ method: 'GET', url: `/api/v1/alert-events?rule_id=${ruleId}`, token: viewer.token })).json() as AlertEvent[];
    expect(listed.find((row) => row.id === id)!.acknowledgement_signature).toMatchObject({ id: signature.id, validity: 'valid' });

    const audited = await auditEvents('alert_event', id);
    const acknowledged = audited.find((entry) => entry.action === 'acknowledge')!;
    expect(acknowledged.changes.after).toMatchObject({ acknowledgement: 'Cooling water restored', signature_id: signature.id });
    const signed = audited.find((entry) => entry.event_type === 'signature.signed')!;
    expect(signed.changes.after).toMatchObject({ signature_id: signature.id, meaning: 'reviewed', content_sha256: signature.content_sha256, authentication: 'password' });

    expect((await acknowledge(id, editor.token, { comment: 'Again', password: PASSWORD })).statusCode).toBe(409);

    // A change to what was signed, made behind the api's back, shows: the signature no longer verifies.
    await ctx.deps.pg.query('UPDATE alert_events SET acknowledgement = $2 WHERE id = $1', [id, 'Nothing happened']);
    const tampered = (await ctx.request({ method: 'GET', url: `/api/v1/alert-events/${id}`, token: viewer.token })).json() as AlertEvent;
    expect(tampered.acknowledgement_signature).toMatchObject({ id: signature.id, validity: 'invalid' });
  });

  it('asks for the password even right after sign-in, and returns to a plain comment when the setting is turned off', async () => {
    // The run-signature window (a sign-in moments ago) does not stand in for the password here.
    const signInWindow = await ctx.request({ method: 'GET', url: '/api/v1/session-policy', token: editor.token });
    expect(signInWindow.json().signing_reauth_minutes).toBeGreaterThan(0);
    expect((await acknowledge(await firing(), admin.token, { comment: 'Seen' })).statusCode).toBe(400);

    expect((await ctx.request({ method: 'PUT', url: SETTING_PATH, token: admin.token, payload: { requires_signature: false } })).statusCode).toBe(200);
    const id = await firing();
    const plain = await acknowledge(id, admin.token, { comment: 'Seen' });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().acknowledgement_signature).toBeNull();
  });
});
