/**
 * Alert routes: rules (anyone who may create data defines them: editors and admins), their firings
 * (listed per run, unit operation or rule; acknowledged with a comment by an editor or admin, audited,
 * and signed with the acknowledger's password where the organisation requires it), the organisation's
 * acknowledgement rule, the count the console's shell shows, and each user's quiet hours. The queries live in repository.ts;
 * evaluation and delivery run in the alert worker (worker.ts).
 */
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import {
  ALERT_MESSAGES, alertAcknowledgeSchema, alertAcknowledgementSettingsSchema, alertEventListQuerySchema, alertEventSchema, alertRuleCreateSchema, alertRuleSchema,
  alertRuleUpdateSchema, alertSummarySchema, quietHoursAnswerSchema, quietHoursSchema, type AlertEvent, type AlertRule, type AlertRuleCreate,
} from '@bioprocess/shared/alerts';
import type { Signature } from '@bioprocess/shared/run-review';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import { LIST_QUERY_DESCRIPTION, listQuerySchema, TOTAL_COUNT_HEADER } from '@bioprocess/shared/pagination';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict, forbidden } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireRun } from '../runs/repository.ts';
import { requireGoldenBatch, toGoldenBatch } from '../golden-batches/repository.ts';
import { organizationTimeZone } from '../organizations/settings.ts';
import { insertSignature, listSignatureMeanings } from '../signatures/repository.ts';
import { proveSigner, type ProvenSigner } from '../signatures/signer.ts';
import { ACKNOWLEDGEMENT_SIGNATURE_MEANING, alertAcknowledgementHash } from './acknowledgement-content.ts';
import {
  acknowledgeAlertEvent, acknowledgementRequiresSignature, alertSummary, deleteAlertRule, insertAlertRule, listAlertEvents, listAlertRules, quietHoursOf,
  requireAlertEvent, requireAlertRuleRow, restartAlertRule, saveQuietHours, setAcknowledgementRequiresSignature, strangers, toAlertRule,
  updateAlertRule,
} from './repository.ts';
import { isKnownTimeZone } from './notifications.ts';

const tags = ['Alerts'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };

/** Checks what a rule refers to: its run, golden batch and recipients are the organisation's, and the golden band's scope fits. */
async function checkRule(db: pg.PoolClient, organizationId: number, rule: AlertRuleCreate): Promise<void> {
  if (rule.run_id !== null) await requireRun(db, organizationId, rule.run_id);
  if (rule.condition.kind === 'golden_band') {
    const batch = toGoldenBatch(await requireGoldenBatch(db, organizationId, rule.condition.golden_batch_id));
    if (batch.alignment.kind === 'threshold') throw badRequest(ALERT_MESSAGES.goldenBandAlignment);
    if (rule.instrument_type === null || !batch.parameters.includes(rule.instrument_type)
      || (rule.unit_operation_type !== null && rule.unit_operation_type !== batch.unit_operation_type)) {
      throw badRequest(ALERT_MESSAGES.goldenBandScope);
    }
  }
  if ((await strangers(db, organizationId, rule.email_user_ids)).length > 0) throw badRequest(ALERT_MESSAGES.recipientsNotMembers);
}

/** A golden-band rule compares readings inside unit operations of its batch's type only. */
async function withGoldenBandScope(db: pg.PoolClient, organizationId: number, rule: AlertRuleCreate): Promise<AlertRuleCreate> {
  if (rule.condition.kind !== 'golden_band' || rule.unit_operation_type !== null) return rule;
  const batch = toGoldenBatch(await requireGoldenBatch(db, organizationId, rule.condition.golden_batch_id));
  return { ...rule, unit_operation_type: batch.unit_operation_type };
}

function auditRule(client: pg.PoolClient, request: FastifyRequest, action: string, id: number, before: AlertRule | null, after: AlertRule | null) {
  return recordAudit(client, request, { event_type: 'data', action, resource_type: 'alert_rule', resource_id: id, changes: { before, after } });
}

/** Records the acknowledgement's signature, bound to the hash of the firing as acknowledged, and audits it like a run signature. */
async function signAcknowledgement(client: pg.PoolClient, request: FastifyRequest, event: AlertEvent, signer: ProvenSigner): Promise<Signature> {
  const meaning = (await listSignatureMeanings(client, event.organization_id)).find((candidate) => candidate.code === ACKNOWLEDGEMENT_SIGNATURE_MEANING)!;
  const contentSha256 = alertAcknowledgementHash(event);
  const signature = await insertSignature(client, event.organization_id, {
    recordType: 'alert_event', recordId: event.id, meaning, signer, timeZone: await organizationTimeZone(client, event.organization_id),
    contentSha256, authentication: signer.authentication,
  });
  await recordAudit(client, request, {
    event_type: 'signature.signed', action: 'sign', resource_type: 'alert_event', resource_id: event.id,
    changes: { before: null, after: { signature_id: signature.id, meaning: meaning.code, meaning_label: meaning.label, signer_name: signer.name,
      signed_at: signature.signed_at, content_sha256: contentSha256, authentication: signer.authentication } },
  });
  return signature;
}

export async function alertRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/alert-rules', {
    config: { access: 'read' },
    schema: { tags, summary: 'List alert rules', description: `By name. ${LIST_QUERY_DESCRIPTION}`, querystring: listQuerySchema, response: { 200: z.array(alertRuleSchema), 400: errorResponseSchema } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const page = await listAlertRules(deps.pg, organizationId, request.query);
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows.map(toAlertRule);
  });

  app.get('/api/v1/alert-rules/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get an alert rule', params: idParamsSchema, response: { 200: alertRuleSchema, ...errors } },
  }, async (request) => toAlertRule(await requireAlertRuleRow(deps.pg, principalOf(request).organizationId, request.params.id)));

  app.post('/api/v1/alert-rules', {
    config: { access: 'create' },
    schema: {
      tags, summary: 'Create an alert rule',
      description: 'One rule applies to every series in its scope: instruments of a type, readings inside unit operations of a type, or of a run (at least one). '
        + 'Conditions: a threshold, a rate of change per minute over a window, no reading for a period (series of running unit operations), or outside a golden '
        + 'batch\'s band on aligned time. A condition must hold for hold_seconds (reading time) before the alert fires. The webhook secret is write-only.',
      body: alertRuleCreateSchema, response: { 201: alertRuleSchema, ...errors },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const created = await withTransaction(deps.pg, async (client) => {
      const rule = await withGoldenBandScope(client, principal.organizationId, request.body);
      await checkRule(client, principal.organizationId, rule);
      const row = toAlertRule(await insertAlertRule(client, principal.organizationId, principal.userId, rule));
      await auditRule(client, request, 'create', row.id, null, row);
      return row;
    });
    return reply.status(201).send(created);
  });

  app.put('/api/v1/alert-rules/:id', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Replace an alert rule',
      description: 'A webhook secret left out keeps the stored one while the webhook URL stays. A changed scope or condition starts the rule over: its open firings resolve.',
      params: idParamsSchema, body: alertRuleUpdateSchema, response: { 200: alertRuleSchema, ...errors },
    },
  }, async (request) => {
    const principal = principalOf(request);
    return withTransaction(deps.pg, async (client) => {
      const existing = await requireAlertRuleRow(client, principal.organizationId, request.params.id, { forUpdate: true });
      const body = request.body;
      const secret = body.webhook_secret ?? (body.webhook_url !== null && body.webhook_url === existing.webhook_url ? existing.webhook_secret : null);
      const parsed = alertRuleCreateSchema.safeParse({ ...body, webhook_secret: secret });
      if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
      const rule = await withGoldenBandScope(client, principal.organizationId, parsed.data);
      await checkRule(client, principal.organizationId, rule);
      const before = toAlertRule(existing);
      const changedMeaning = JSON.stringify([before.instrument_type, before.unit_operation_type, before.run_id, before.condition])
        !== JSON.stringify([rule.instrument_type, rule.unit_operation_type, rule.run_id, rule.condition]) || !rule.enabled;
      const after = toAlertRule(await updateAlertRule(client, principal.organizationId, before.id, rule));
      if (changedMeaning) await restartAlertRule(client, before.id);
      await auditRule(client, request, 'update', after.id, before, after);
      return after;
    });
  });

  app.delete('/api/v1/alert-rules/:id', {
    config: { access: 'edit' },
    schema: { tags, summary: 'Delete an alert rule', description: 'Its firings go with it.', params: idParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const existing = toAlertRule(await requireAlertRuleRow(client, principal.organizationId, request.params.id, { forUpdate: true }));
      await deleteAlertRule(client, principal.organizationId, existing.id);
      await auditRule(client, request, 'delete', existing.id, existing, null);
    });
    return reply.status(204).send(null);
  });

  app.get('/api/v1/alert-events', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'List alert firings', description: `Newest first; filtered by run, unit operation, rule, state or acknowledgement. ${LIST_QUERY_DESCRIPTION}`,
      querystring: alertEventListQuerySchema, response: { 200: z.array(alertEventSchema), 400: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const { limit, offset, run_id: runId, unit_operation_id: unitOperationId, rule_id: ruleId, state, unacknowledged } = request.query;
    const page = await listAlertEvents(deps.pg, organizationId, { runId, unitOperationId, ruleId, state, unacknowledged }, { limit, offset });
    reply.header(TOTAL_COUNT_HEADER, String(page.total));
    return page.rows;
  });

  app.get('/api/v1/alert-events/:id', {
    config: { access: 'read' },
    schema: { tags, summary: 'Get an alert firing', params: idParamsSchema, response: { 200: alertEventSchema, ...errors } },
  }, async (request) => requireAlertEvent(deps.pg, principalOf(request).organizationId, request.params.id));

  app.post('/api/v1/alert-events/:id/acknowledge', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Acknowledge an alert firing with a comment',
      description: 'Editors and admins, signed in as themselves; once per firing; audited. Where the organisation requires acknowledgements '
        + 'to be signed (GET /api/v1/organization-settings/alert-acknowledgements), password is required every time (400 without it, 403 '
        + 'when wrong, nothing recorded) and the acknowledgement is recorded with an electronic signature (meaning Reviewed) bound to the '
        + 'SHA-256 of the acknowledged firing (docs/signatures.md); the answer carries it as acknowledgement_signature.',
      params: idParamsSchema, body: alertAcknowledgeSchema, response: { 200: alertEventSchema, 403: errorResponseSchema, 409: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const principal = principalOf(request);
    if (principal.userId === null) throw forbidden(ALERT_MESSAGES.acknowledgeNeedsUser);
    const { organizationId } = principal;
    const eventId = request.params.id;
    // Checked before the password is, so a firing of another organisation or one already acknowledged costs no password attempt.
    const existing = await requireAlertEvent(deps.pg, organizationId, eventId);
    if (existing.acknowledged_at !== null) throw conflict(ALERT_MESSAGES.alreadyAcknowledged);
    const signer = await acknowledgementRequiresSignature(deps.pg, organizationId)
      ? await proveSigner(deps, request, request.body.password, { recordType: 'alert_event', recordId: eventId, meaning: ACKNOWLEDGEMENT_SIGNATURE_MEANING }, {
        alwaysPassword: true,
        messages: { passwordRequired: ALERT_MESSAGES.acknowledgementPasswordRequired, passwordWrong: ALERT_MESSAGES.acknowledgementPasswordWrong },
      })
      : null;
    return withTransaction(deps.pg, async (client) => {
      const before = await requireAlertEvent(client, organizationId, eventId, { forUpdate: true });
      if (before.acknowledged_at !== null) throw conflict(ALERT_MESSAGES.alreadyAcknowledged);
      // The rule turned on while the password was being checked: the acknowledgement would go unsigned.
      if (signer === null && await acknowledgementRequiresSignature(client, organizationId)) throw badRequest(ALERT_MESSAGES.acknowledgementPasswordRequired);
      await acknowledgeAlertEvent(client, organizationId, before.id, principal.userId!, request.body.comment);
      const acknowledged = await requireAlertEvent(client, organizationId, before.id);
      const signature = signer === null ? null : await signAcknowledgement(client, request, acknowledged, signer);
      await recordAudit(client, request, {
        event_type: 'data', action: 'acknowledge', resource_type: 'alert_event', resource_id: before.id,
        changes: {
          before: { acknowledged_at: null },
          after: { acknowledged_at: acknowledged.acknowledged_at, acknowledgement: acknowledged.acknowledgement, signature_id: signature?.id ?? null },
        },
      });
      return requireAlertEvent(client, organizationId, before.id);
    });
  });

  app.get('/api/v1/organization-settings/alert-acknowledgements', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'Whether acknowledging an alert requires an electronic signature',
      description: 'Every member reads it: the console asks for the password when it is on.', response: { 200: alertAcknowledgementSettingsSchema },
    },
  }, async (request) => ({ requires_signature: await acknowledgementRequiresSignature(deps.pg, principalOf(request).organizationId) }));

  app.put('/api/v1/organization-settings/alert-acknowledgements', {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Require (or stop requiring) an electronic signature to acknowledge an alert (admins)',
      description: 'Audited. Acknowledgements already recorded keep their signatures, or their lack of one.',
      body: alertAcknowledgementSettingsSchema, response: { 200: alertAcknowledgementSettingsSchema, 400: errorResponseSchema },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return withTransaction(deps.pg, async (client) => {
      const before = { requires_signature: await acknowledgementRequiresSignature(client, organizationId, { forUpdate: true }) };
      await setAcknowledgementRequiresSignature(client, organizationId, request.body.requires_signature);
      const after = { requires_signature: request.body.requires_signature };
      await recordAudit(client, request, {
        event_type: 'organization.alert_acknowledgement_settings_updated', action: 'update', resource_type: 'organization', resource_id: organizationId,
        changes: { before, after },
      });
      return after;
    });
  });

  app.get('/api/v1/alerts/summary', {
    config: { access: 'read' },
    schema: { tags, summary: 'Counts of firings: open, and not acknowledged', response: { 200: alertSummarySchema } },
  }, async (request) => alertSummary(deps.pg, principalOf(request).organizationId));

  app.get('/api/v1/alerts/quiet-hours', {
    config: { access: 'authenticated' },
    schema: { tags, summary: 'The signed-in user\'s quiet hours (null: none)', response: { 200: quietHoursAnswerSchema, 403: errorResponseSchema } },
  }, async (request) => {
    const { userId } = principalOf(request);
    if (userId === null) throw forbidden(ALERT_MESSAGES.quietHoursNeedUser);
    return quietHoursOf(deps.pg, userId);
  });

  app.put('/api/v1/alerts/quiet-hours', {
    config: { access: 'authenticated' },
    schema: {
      tags, summary: 'Set the signed-in user\'s quiet hours', description: 'Alert emails due inside them are held and sent when they end.',
      body: quietHoursSchema, response: { 200: quietHoursSchema, 400: errorResponseSchema, 403: errorResponseSchema },
    },
  }, async (request) => {
    const { userId } = principalOf(request);
    if (userId === null) throw forbidden(ALERT_MESSAGES.quietHoursNeedUser);
    if (!isKnownTimeZone(request.body.time_zone)) throw badRequest(ALERT_MESSAGES.unknownTimeZone);
    await saveQuietHours(deps.pg, userId, request.body);
    return request.body;
  });

  app.delete('/api/v1/alerts/quiet-hours', {
    config: { access: 'authenticated' },
    schema: { tags, summary: 'Remove the signed-in user\'s quiet hours', response: { 204: z.null(), 403: errorResponseSchema } },
  }, async (request, reply) => {
    const { userId } = principalOf(request);
    if (userId === null) throw forbidden(ALERT_MESSAGES.quietHoursNeedUser);
    await saveQuietHours(deps.pg, userId, null);
    return reply.status(204).send(null);
  });
}
