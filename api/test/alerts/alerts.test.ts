/**
 * Alerts end to end against the real services: feeds posted through the api are written by a real
 * ingest-worker, announced on the points-stored stream, evaluated by a real alert worker; emails land
 * in the dev outbox and webhook calls reach a local HTTP server. Each scenario counts firings,
 * resolutions, emails and webhook calls: a threshold crossed, a feed that stops, a run drifting out
 * of its golden band, and a flapping probe notifying once per group.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_SIGNATURE_HEADER, type AlertEvent, type AlertRule } from '@bioprocess/shared/alerts';
import { createLogger } from '@bioprocess/shared/server/logger';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createTestContext, startWorker, type Plant, type TestContext } from '../support/index.ts';
import { until } from '../../../shared/test/support/until.ts';
import { startAlertWorker, type AlertWorker } from '../../src/alerts/worker.ts';
import { createDeliveryQueue, relayDueDeliveries, signPayload } from '../../src/alerts/delivery.ts';

const MINUTE = 60_000;
const SECRET = 'webhook-secret-for-tests';

interface Received { body: string; signature: string | undefined }

describe('alerts', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let alerts: AlertWorker;
  let plant: Plant;
  let runId: number;
  let unitOperationId: number;
  let startMs: number;
  let webhook: http.Server;
  let webhookUrl: string;
  const received: Received[] = [];

  beforeAll(async () => {
    ctx = await createTestContext({ DEV_OUTBOX: 'true' });
    webhook = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      request.on('end', () => {
        received.push({ body, signature: request.headers[ALERT_SIGNATURE_HEADER] as string | undefined });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`;
    ingest = startWorker(ctx);
    alerts = startAlertWorker(ctx.env, { ALERT_CLAIM_IDLE_MS: 5_000, ALERT_SILENCE_CHECK_MS: 3_600_000, ALERT_RELAY_MS: 200, ALERT_EVALUATE: true },
      createLogger('alert-worker-test', ctx.env.LOG_LEVEL));
    await alerts.consumer.ensureGroup();
    plant = await createPlant(ctx, 3);
    startMs = Date.now() - 60 * MINUTE;
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, 'Alert run', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    runId = Number(run.rows[0].id);
    const uo = await ctx.deps.pg.query(
      `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time) VALUES ($1, $2, 'fermentation', $3, to_timestamp($4 / 1000.0)) RETURNING id`,
      [plant.organizationId, runId, plant.equipmentId, startMs]);
    unitOperationId = Number(uo.rows[0].id);
  }, 120_000);

  afterAll(async () => {
    await alerts?.close();
    await ingest?.close();
    webhook?.close();
    await ctx?.close();
  });

  async function createRule(body: Record<string, unknown>): Promise<AlertRule> {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/alert-rules', token: plant.editor.token, payload: body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as AlertRule;
  }

  async function post(instrumentId: number, values: ReadonlyArray<[offsetMinutes: number, value: number]>): Promise<void> {
    const data = values.map(([minutes, value]) => ({ ts: startMs + minutes * MINUTE, instrument_id: instrumentId, value }));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(response.statusCode, response.body).toBe(200);
  }

  async function events(ruleId: number): Promise<AlertEvent[]> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/alert-events?rule_id=${ruleId}`, token: plant.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as AlertEvent[];
  }

  async function outboxFor(email: string): Promise<number> {
    const { rows } = await ctx.deps.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM dev_outbox WHERE lower("to") = lower($1) AND subject LIKE 'Alert:%'`, [email]);
    return rows[0]!.n;
  }

  it('refuses a rule without a scope, a webhook without a secret and a stranger as recipient, naming why', async () => {
    const base = { name: 'Bad', condition: { kind: 'threshold', direction: 'above', value: 1 } };
    const cases: Array<[Record<string, unknown>, string]> = [
      [base, 'A rule needs a scope'],
      [{ ...base, instrument_type: 'temperature', webhook_url: 'http://127.0.0.1/x' }, 'A webhook needs a secret'],
      [{ ...base, instrument_type: 'temperature', email_user_ids: [2147480000] }, 'Email recipients must be users of the organisation.'],
      [{ ...base, instrument_type: 'temperature', condition: { kind: 'threshold', direction: 'sideways', value: 1 } }, 'condition'],
    ];
    for (const [payload, message] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/alert-rules', token: plant.editor.token, payload });
      expect(response.statusCode, response.body).toBe(400);
      expect((response.json() as { error: string }).error).toContain(message);
    }
    const viewer = await ctx.request({ method: 'POST', url: '/api/v1/alert-rules', token: plant.viewer.token, payload: { ...base, instrument_type: 'temperature' } });
    expect(viewer.statusCode).toBe(403);
    expect((await ctx.deps.pg.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n).toBe(0);
  });

  it('a feed crossing a threshold fires once, emails and calls the webhook once, resolves once, and is acknowledged with a comment', async () => {
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    await ctx.deps.pg.query(`UPDATE instruments SET type = 'dissolved_o2' WHERE id = $1`, [instrument]);
    const rule = await createRule({
      name: 'DO too high', instrument_type: 'dissolved_o2', unit_operation_type: 'fermentation',
      condition: { kind: 'threshold', direction: 'above', value: 40, hold_seconds: 60 },
      email_user_ids: [plant.editor.id], webhook_url: webhookUrl, webhook_secret: SECRET,
    });
    expect(rule.has_webhook_secret).toBe(true);
    // 45 at minute 3 only starts the hold; 46 at minute 4 has held it a minute: the alert fires there.
    await post(instrument!, [[1, 30], [2, 35], [3, 45], [4, 46], [5, 41]]);
    const [fired] = await until('the firing', async () => { const list = await events(rule.id); return list.length === 1 ? list : null; });
    expect(fired!.state).toBe('firing');
    expect(Date.parse(fired!.started_at)).toBe(startMs + 3 * MINUTE);
    expect(Date.parse(fired!.fired_at)).toBe(startMs + 4 * MINUTE);
    expect(fired!.run_id).toBe(runId);
    expect(fired!.unit_operation_id).toBe(unitOperationId);

    await post(instrument!, [[6, 30], [7, 31]]);
    const [resolved] = await until('the resolution', async () => { const list = await events(rule.id); return list[0]?.state === 'resolved' ? list : null; });
    expect(Date.parse(resolved!.resolved_at!)).toBe(startMs + 6 * MINUTE);

    await until('the email', async () => (await outboxFor(plant.editor.email)) >= 1);
    await until('the webhook call', async () => received.length >= 1);
    expect(await outboxFor(plant.editor.email)).toBe(1);
    expect(received).toHaveLength(1);
    expect(received[0]!.signature).toBe(signPayload(SECRET, received[0]!.body));
    expect(JSON.parse(received[0]!.body).event.id).toBe(fired!.id);

    const summary = await ctx.request({ method: 'GET', url: '/api/v1/alerts/summary', token: plant.viewer.token });
    expect(summary.json()).toMatchObject({ firing: 0, unacknowledged: 1 });
    const byViewer = await ctx.request({ method: 'POST', url: `/api/v1/alert-events/${fired!.id}/acknowledge`, token: plant.viewer.token, payload: { comment: 'Seen' } });
    expect(byViewer.statusCode).toBe(403);
    const empty = await ctx.request({ method: 'POST', url: `/api/v1/alert-events/${fired!.id}/acknowledge`, token: plant.editor.token, payload: { comment: ' ' } });
    expect(empty.statusCode).toBe(400);
    const acknowledged = await ctx.request({ method: 'POST', url: `/api/v1/alert-events/${fired!.id}/acknowledge`, token: plant.editor.token, payload: { comment: 'Air valve stuck, fixed' } });
    expect(acknowledged.statusCode, acknowledged.body).toBe(200);
    expect(acknowledged.json()).toMatchObject({ acknowledgement: 'Air valve stuck, fixed', acknowledged_by: plant.editor.id });
    const again = await ctx.request({ method: 'POST', url: `/api/v1/alert-events/${fired!.id}/acknowledge`, token: plant.editor.token, payload: { comment: 'Again' } });
    expect(again.statusCode).toBe(409);
    // The audit event is in the outbox, or already stored by the relay's consumer: one in all.
    const outboxed = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM audit_outbox WHERE event->>'resource_type' = 'alert_event' AND event->>'action' = 'acknowledge'`);
    const stored = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM audit_logs WHERE resource_type = 'alert_event' AND action = 'acknowledge'`);
    expect(outboxed.rows[0].n + stored.rows[0].n).toBe(1);

    // Still exactly one of each once everything settled.
    await alerts.relay();
    expect(await events(rule.id)).toHaveLength(1);
    expect(await outboxFor(plant.editor.email)).toBe(1);
    expect(received).toHaveLength(1);
  });

  it('a flapping probe fires each time but notifies once per rule and run within the group window', async () => {
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    await ctx.deps.pg.query(`UPDATE instruments SET type = 'pH' WHERE id = $1`, [instrument]);
    const admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    const rule = await createRule({
      name: 'pH low', instrument_type: 'pH', condition: { kind: 'threshold', direction: 'below', value: 6.5 }, email_user_ids: [admin.id],
    });
    await post(instrument!, [[10, 7], [11, 6], [12, 7], [13, 6], [14, 7], [15, 6], [16, 7]]);
    const list = await until('three firings', async () => { const found = await events(rule.id); return found.length === 3 && found.every((event) => event.state === 'resolved') ? found : null; });
    expect(list).toHaveLength(3);
    await until('the email', async () => (await outboxFor(admin.email)) >= 1);
    await alerts.relay();
    expect(await outboxFor(admin.email)).toBe(1);
    const { rows } = await ctx.deps.pg.query('SELECT event_count FROM alert_notifications WHERE rule_id = $1', [rule.id]);
    expect(rows.map((row) => row.event_count)).toEqual([3]);
  });

  it('holds an email due inside the recipient\'s quiet hours and sends it when they end', async () => {
    const sleeper = await ctx.createUser({ organizationId: plant.organizationId, role: 'viewer' });
    const badZone = await ctx.request({ method: 'PUT', url: '/api/v1/alerts/quiet-hours', token: sleeper.token, payload: { start_minute: 0, end_minute: 60, time_zone: 'Mars/Olympus' } });
    expect(badZone.statusCode).toBe(400);
    const nowMinute = Math.floor((Date.now() % 86_400_000) / MINUTE);
    const quiet = { start_minute: (nowMinute + 1440 - 60) % 1440, end_minute: (nowMinute + 120) % 1440, time_zone: 'UTC' };
    const saved = await ctx.request({ method: 'PUT', url: '/api/v1/alerts/quiet-hours', token: sleeper.token, payload: quiet });
    expect(saved.statusCode, saved.body).toBe(200);
    expect((await ctx.request({ method: 'GET', url: '/api/v1/alerts/quiet-hours', token: sleeper.token })).json()).toEqual(quiet);
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    await ctx.deps.pg.query(`UPDATE instruments SET type = 'foam_level' WHERE id = $1`, [instrument]);
    const rule = await createRule({ name: 'Foam', instrument_type: 'foam_level', condition: { kind: 'threshold', direction: 'above', value: 5 }, email_user_ids: [sleeper.id] });
    await post(instrument!, [[30, 1], [31, 9]]);
    await until('the firing', async () => (await events(rule.id)).length === 1);
    const { rows } = await ctx.deps.pg.query<{ due_at: Date; delivered_at: Date | null }>(
      `SELECT d.due_at, d.delivered_at FROM alert_deliveries d JOIN alert_notifications n ON n.id = d.notification_id WHERE n.rule_id = $1`, [rule.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.due_at.getTime()).toBeGreaterThan(Date.now() + 100 * MINUTE);
    await alerts.relay();
    expect(await outboxFor(sleeper.email)).toBe(0);
    // The relay at the end of the quiet hours (its clock passed in) queues it; the worker sends it.
    const queue = createDeliveryQueue(ctx.env, createLogger('relay-test', 'silent'));
    expect(await relayDueDeliveries(ctx.deps.pg, queue, rows[0]!.due_at.getTime())).toBe(1);
    await queue.close();
    await until('the held email', async () => (await outboxFor(sleeper.email)) === 1);
  });

  it('retries a webhook that fails, with the same signed body, until it answers 2xx', async () => {
    const calls: Received[] = [];
    const flaky = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      request.on('end', () => {
        calls.push({ body, signature: request.headers[ALERT_SIGNATURE_HEADER] as string | undefined });
        response.writeHead(calls.length === 1 ? 503 : 200).end();
      });
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      await ctx.deps.pg.query(`UPDATE instruments SET type = 'vessel_pressure' WHERE id = $1`, [instrument]);
      const rule = await createRule({
        name: 'Pressure', instrument_type: 'vessel_pressure', condition: { kind: 'threshold', direction: 'above', value: 2 },
        webhook_url: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`, webhook_secret: SECRET,
      });
      await post(instrument!, [[40, 1], [41, 3]]);
      const delivered = await until('the webhook delivered', async () => {
        const { rows } = await ctx.deps.pg.query<{ attempts: number; delivered_at: Date | null }>(
          `SELECT d.attempts, d.delivered_at FROM alert_deliveries d JOIN alert_notifications n ON n.id = d.notification_id WHERE n.rule_id = $1`, [rule.id]);
        return rows[0]?.delivered_at ? rows[0] : null;
      });
      expect(delivered.attempts).toBe(2);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.body).toBe(calls[0]!.body);
      for (const call of calls) expect(call.signature).toBe(signPayload(SECRET, call.body));
    } finally {
      flaky.close();
    }
  });

  it('history posted after newer readings records an episode it holds as a resolved firing, once, without moving the state', async () => {
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    await ctx.deps.pg.query(`UPDATE instruments SET type = 'conductivity' WHERE id = $1`, [instrument]);
    const rule = await createRule({ name: 'Conductivity', instrument_type: 'conductivity', condition: { kind: 'threshold', direction: 'above', value: 10 } });
    await post(instrument!, [[50, 5]]);
    await until('the live reading applied', async () => {
      const { rows } = await ctx.deps.pg.query('SELECT last_point_ms FROM alert_states WHERE rule_id = $1', [rule.id]);
      return rows[0] && Number(rows[0].last_point_ms) === startMs + 50 * MINUTE;
    });
    const history: Array<[number, number]> = [[44, 5], [45, 12], [46, 13], [47, 6], [48, 12]];
    await post(instrument!, history);
    const [episode] = await until('the late episode', async () => { const list = await events(rule.id); return list.length === 1 ? list : null; });
    expect(episode).toMatchObject({ state: 'resolved' });
    expect(Date.parse(episode!.started_at)).toBe(startMs + 45 * MINUTE);
    expect(Date.parse(episode!.resolved_at!)).toBe(startMs + 47 * MINUTE);
    await post(instrument!, history);
    await post(instrument!, [[51, 5]]);
    await until('the last reading applied', async () => {
      const { rows } = await ctx.deps.pg.query('SELECT state, last_point_ms FROM alert_states WHERE rule_id = $1', [rule.id]);
      return Number(rows[0].last_point_ms) === startMs + 51 * MINUTE && rows[0].state === 'ok';
    });
    expect(await events(rule.id)).toHaveLength(1);
  });

  it('a feed that stops fires once when its silence outlasts the period and resolves at its next reading', async () => {
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    await ctx.deps.pg.query(`UPDATE instruments SET type = 'stir_rate' WHERE id = $1`, [instrument]);
    const rule = await createRule({
      name: 'Stirrer silent', instrument_type: 'stir_rate', run_id: runId, condition: { kind: 'no_data', period_seconds: 300 }, email_user_ids: [plant.viewer.id],
    });
    await post(instrument!, [[20, 300], [21, 300]]);
    await until('the reading applied', async () => {
      const { rows } = await ctx.deps.pg.query('SELECT last_point_ms FROM alert_states WHERE rule_id = $1', [rule.id]);
      return rows[0]?.last_point_ms !== undefined && Number(rows[0].last_point_ms) === startMs + 21 * MINUTE;
    });
    // The check's clock is passed in: 4 minutes of silence are within the period, 6 are not.
    expect(await alerts.evaluator.checkSilence(startMs + 25 * MINUTE)).toBe(0);
    expect(await alerts.evaluator.checkSilence(startMs + 27 * MINUTE)).toBe(1);
    expect(await alerts.evaluator.checkSilence(startMs + 40 * MINUTE)).toBe(0);
    const [fired] = await events(rule.id);
    expect(fired).toMatchObject({ state: 'firing', run_id: runId });
    expect(Date.parse(fired!.started_at)).toBe(startMs + 21 * MINUTE);

    await post(instrument!, [[41, 300]]);
    await until('the resolution', async () => (await events(rule.id))[0]?.state === 'resolved');
    await until('the email', async () => (await outboxFor(plant.viewer.email)) >= 1);
    await alerts.relay();
    expect(await events(rule.id)).toHaveLength(1);
    expect(await outboxFor(plant.viewer.email)).toBe(1);
  });

  it('a run drifting out of its golden band on aligned time fires once and resolves once back inside', async () => {
    // Three reference batches on their own reactors, 20 minutes each around 37 degrees, started at other times.
    const referenceIds: number[] = [];
    for (let reference = 0; reference < 3; reference += 1) {
      const other = await createPlantIn(ctx, plant.organizationId);
      const refStart = startMs - (reference + 2) * 120 * MINUTE;
      const { rows } = await ctx.deps.pg.query(
        `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
         VALUES ($1, $2, 'fermentation', $3, to_timestamp($4 / 1000.0), to_timestamp($5 / 1000.0)) RETURNING id`,
        [plant.organizationId, runId, other.equipmentId, refStart, refStart + 30 * MINUTE]);
      referenceIds.push(Number(rows[0].id));
      const data = Array.from({ length: 30 }, (_, minute) => ({ ts: refStart + minute * MINUTE, instrument_id: other.instrumentId, value: 37 + ((minute + reference) % 3) * 0.1 }));
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
      expect(response.statusCode, response.body).toBe(200);
    }
    const batch = await ctx.request({
      method: 'POST', url: '/api/v1/golden-batches', token: plant.editor.token,
      payload: { name: 'Good 37', unit_operation_type: 'fermentation', reference_unit_operation_ids: referenceIds, parameters: ['temperature'], grid_step_seconds: 60, band: { kind: 'sigma', k: 3 }, tolerances: { temperature: 0.5 } },
    });
    expect(batch.statusCode, batch.body).toBe(201);
    const goldenBatchId = (batch.json() as { id: number }).id;
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const wrongScope = await ctx.request({
      method: 'POST', url: '/api/v1/alert-rules', token: plant.editor.token,
      payload: { name: 'Band', instrument_type: 'pH', condition: { kind: 'golden_band', golden_batch_id: goldenBatchId } },
    });
    expect(wrongScope.statusCode).toBe(400);
    const rule = await createRule({
      name: 'Off the golden batch', instrument_type: 'temperature', condition: { kind: 'golden_band', golden_batch_id: goldenBatchId, hold_seconds: 120 },
      webhook_url: webhookUrl, webhook_secret: SECRET,
    });
    expect(rule.unit_operation_type).toBe('fermentation');
    const before = received.length;
    // Only this instrument of the plant reads: the plant's other temperature probes post nothing.
    await post(instrument!, [[1, 37.1], [2, 37], [3, 39], [4, 40], [5, 41], [6, 42]]);
    const [fired] = await until('the firing', async () => { const list = await events(rule.id); return list.length === 1 ? list : null; });
    expect(Date.parse(fired!.started_at)).toBe(startMs + 3 * MINUTE);
    expect(Date.parse(fired!.fired_at)).toBe(startMs + 5 * MINUTE);
    await post(instrument!, [[7, 37.1], [8, 37]]);
    await until('the resolution', async () => (await events(rule.id))[0]?.state === 'resolved');
    await until('the webhook call', async () => received.length > before);
    await alerts.relay();
    expect(await events(rule.id)).toHaveLength(1);
    expect(received.length - before).toBe(1);
  });
});

async function createPlantIn(ctx: TestContext, organizationId: number): Promise<{ equipmentId: number; instrumentId: number }> {
  const { rows } = await ctx.deps.pg.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type) SELECT $1, f.id, 'Reference ' || gen_random_uuid(), 'bioreactor' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
    [organizationId]);
  const equipmentId = Number(rows[0].id);
  const [instrumentId] = await addInstruments(ctx, organizationId, equipmentId, 1);
  return { equipmentId, instrumentId: instrumentId! };
}
