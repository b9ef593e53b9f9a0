/**
 * Alert rows in PostgreSQL: rules, events (firings) with the signature of their acknowledgement,
 * quiet hours, the organisation's acknowledgement rule; the organisation-scoped queries and the wire forms.
 */
import type pg from 'pg';
import {
  ALERT_MESSAGES, alertConditionSchema, type AlertEvent, type AlertRule, type AlertRuleCreate, type QuietHours,
} from '@bioprocess/shared/alerts';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { instrumentNames } from '@bioprocess/shared/server/instruments-repository';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { notFound } from '../platform/http-error.ts';
import type { RowPage } from '../platform/organization-rows.ts';
import { toSignature, type SignatureRow } from '../signatures/repository.ts';
import { alertAcknowledgementHash } from './acknowledgement-content.ts';

type Db = Queryable;

interface RuleRow {
  id: string;
  organization_id: string;
  name: string;
  enabled: boolean;
  instrument_type: string | null;
  unit_operation_type: string | null;
  run_id: string | null;
  condition: unknown;
  email_user_ids: string[];
  webhook_url: string | null;
  webhook_secret: string | null;
  group_window_seconds: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const RULE_COLUMNS = `id, organization_id, name, enabled, instrument_type, unit_operation_type, run_id, condition, email_user_ids,
  webhook_url, webhook_secret, group_window_seconds, created_by, created_at, updated_at`;

export function toAlertRule(row: RuleRow): AlertRule {
  return {
    id: Number(row.id), organization_id: Number(row.organization_id), name: row.name, enabled: row.enabled,
    instrument_type: row.instrument_type, unit_operation_type: row.unit_operation_type, run_id: row.run_id === null ? null : Number(row.run_id),
    condition: alertConditionSchema.parse(row.condition), email_user_ids: row.email_user_ids.map(Number), webhook_url: row.webhook_url,
    has_webhook_secret: row.webhook_secret !== null, group_window_seconds: row.group_window_seconds,
    created_by: row.created_by === null ? null : Number(row.created_by), created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at),
  };
}

export async function requireAlertRuleRow(db: Db, organizationId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<RuleRow> {
  const { rows } = await db.query<RuleRow>(
    `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE id = $1 AND organization_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`, [id, organizationId]);
  if (!rows[0]) throw notFound(ALERT_MESSAGES.ruleNotFound);
  return rows[0];
}

export async function listAlertRules(db: Db, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<RuleRow>> {
  const [list, count] = await Promise.all([
    db.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM alert_rules WHERE organization_id = $1 ORDER BY name, id LIMIT $2 OFFSET $3`, [organizationId, page.limit, page.offset]),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM alert_rules WHERE organization_id = $1', [organizationId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

export async function insertAlertRule(client: pg.PoolClient, organizationId: number, createdBy: number | null, rule: AlertRuleCreate): Promise<RuleRow> {
  const { rows } = await client.query<RuleRow>(
    `INSERT INTO alert_rules (organization_id, name, enabled, instrument_type, unit_operation_type, run_id, condition, email_user_ids,
                              webhook_url, webhook_secret, group_window_seconds, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${RULE_COLUMNS}`,
    [organizationId, rule.name, rule.enabled, rule.instrument_type, rule.unit_operation_type, rule.run_id, JSON.stringify(rule.condition),
      rule.email_user_ids, rule.webhook_url, rule.webhook_secret, rule.group_window_seconds, createdBy]);
  return rows[0]!;
}

/** Replaces a rule. Its states start over when the condition or scope changes: they were judged by another rule. */
export async function updateAlertRule(client: pg.PoolClient, organizationId: number, id: number, rule: AlertRuleCreate): Promise<RuleRow> {
  const { rows } = await client.query<RuleRow>(
    `UPDATE alert_rules SET name = $3, enabled = $4, instrument_type = $5, unit_operation_type = $6, run_id = $7, condition = $8,
            email_user_ids = $9, webhook_url = $10, webhook_secret = $11, group_window_seconds = $12, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`,
    [id, organizationId, rule.name, rule.enabled, rule.instrument_type, rule.unit_operation_type, rule.run_id, JSON.stringify(rule.condition),
      rule.email_user_ids, rule.webhook_url, rule.webhook_secret, rule.group_window_seconds]);
  return rows[0]!;
}

/** Forgets the states of a rule whose meaning changed; open firings resolve at the change. */
export async function restartAlertRule(client: pg.PoolClient, id: number): Promise<void> {
  await client.query('UPDATE alert_events SET resolved_at = now() WHERE rule_id = $1 AND resolved_at IS NULL', [id]);
  await client.query('DELETE FROM alert_states WHERE rule_id = $1', [id]);
}

export async function deleteAlertRule(client: pg.PoolClient, organizationId: number, id: number): Promise<void> {
  await client.query('DELETE FROM alert_rules WHERE id = $1 AND organization_id = $2', [id, organizationId]);
}

/** The users among `ids` who are not members of the organisation. */
export async function strangers(db: Db, organizationId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>('SELECT id FROM users WHERE organization_id = $1 AND id = ANY($2::bigint[])', [organizationId, ids]);
  const members = new Set(rows.map((row) => Number(row.id)));
  return ids.filter((id) => !members.has(id));
}

interface EventRow {
  id: string;
  organization_id: string;
  rule_id: string;
  rule_name: string;
  condition_kind: AlertEvent['condition_kind'];
  instrument_id: string;
  unit_operation_id: string | null;
  run_id: string | null;
  run_name: string | null;
  started_at: Date;
  fired_at: Date;
  resolved_at: Date | null;
  value: number | null;
  message: string;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  acknowledged_by_name: string | null;
  acknowledgement: string | null;
  /** The acknowledgement's signature row as JSON (timestamps as text), or null. */
  signature: SignatureRow | null;
}

const EVENT_SELECT = `
  SELECT e.id, e.organization_id, e.rule_id, r.name AS rule_name, r.condition->>'kind' AS condition_kind, e.instrument_id,
         e.unit_operation_id, e.run_id, run.name AS run_name, e.started_at, e.fired_at, e.resolved_at, e.value, e.message,
         e.acknowledged_at, e.acknowledged_by, u.name AS acknowledged_by_name, e.acknowledgement,
         CASE WHEN s.id IS NULL THEN NULL ELSE to_jsonb(s) END AS signature
    FROM alert_events e
    JOIN alert_rules r ON r.id = e.rule_id
    LEFT JOIN runs run ON run.id = e.run_id
    LEFT JOIN users u ON u.id = e.acknowledged_by
    LEFT JOIN signatures s ON s.organization_id = e.organization_id AND s.record_type = 'alert_event' AND s.record_id = e.id`;

const idOrNull = (value: string | null) => (value === null ? null : Number(value));

/**
 * The events with the name of their instrument. An event goes with its instrument (the foreign key
 * cascades), so one whose instrument is gone was deleted with it since it was read: it is left out.
 */
async function withInstrumentNames(db: Db, organizationId: number, rows: readonly EventRow[]): Promise<Array<EventRow & { instrument_name: string }>> {
  const names = new Map((await instrumentNames(db, [...new Set(rows.map((row) => Number(row.instrument_id)))], organizationId)).map(({ id, name }) => [Number(id), name]));
  return rows.flatMap((row) => {
    const instrumentName = names.get(Number(row.instrument_id));
    return instrumentName === undefined ? [] : [{ ...row, instrument_name: instrumentName }];
  });
}

export function toAlertEvent(row: EventRow & { instrument_name: string }): AlertEvent {
  const event: Omit<AlertEvent, 'acknowledgement_signature'> = {
    id: Number(row.id), organization_id: Number(row.organization_id), rule_id: Number(row.rule_id), rule_name: row.rule_name,
    condition_kind: row.condition_kind, instrument_id: Number(row.instrument_id), instrument_name: row.instrument_name,
    unit_operation_id: idOrNull(row.unit_operation_id), run_id: idOrNull(row.run_id), run_name: row.run_name,
    state: row.resolved_at === null ? 'firing' : 'resolved',
    started_at: toIsoTimestamp(row.started_at), fired_at: toIsoTimestamp(row.fired_at), resolved_at: toIsoTimestamp(row.resolved_at),
    value: row.value, message: row.message, acknowledged_at: toIsoTimestamp(row.acknowledged_at), acknowledged_by: idOrNull(row.acknowledged_by),
    acknowledged_by_name: row.acknowledged_by_name, acknowledgement: row.acknowledgement,
  };
  // Validity is judged now: the firing's acknowledged facts hashed again against the hash that was signed.
  const signature = row.signature === null ? null : toSignature(row.signature, alertAcknowledgementHash(event));
  return { ...event, acknowledgement_signature: signature };
}

export async function requireAlertEvent(db: Db, organizationId: number, id: number, options: { forUpdate?: boolean } = {}): Promise<AlertEvent> {
  const { rows } = await db.query<EventRow>(`${EVENT_SELECT} WHERE e.id = $1 AND e.organization_id = $2${options.forUpdate ? ' FOR UPDATE OF e' : ''}`, [id, organizationId]);
  const [event] = await withInstrumentNames(db, organizationId, rows);
  if (!event) throw notFound(ALERT_MESSAGES.eventNotFound);
  return toAlertEvent(event);
}

export interface EventFilter {
  runId?: number;
  unitOperationId?: number;
  ruleId?: number;
  state?: 'firing' | 'resolved';
  unacknowledged?: boolean;
}

export async function listAlertEvents(db: Db, organizationId: number, filter: EventFilter, page: { limit: number; offset: number }): Promise<RowPage<AlertEvent>> {
  const where = `e.organization_id = $1 AND ($2::bigint IS NULL OR e.run_id = $2) AND ($3::bigint IS NULL OR e.unit_operation_id = $3)
    AND ($4::bigint IS NULL OR e.rule_id = $4) AND ($5::text IS NULL OR (e.resolved_at IS NULL) = ($5 = 'firing'))
    AND (NOT $6 OR e.acknowledged_at IS NULL)`;
  const values = [organizationId, filter.runId ?? null, filter.unitOperationId ?? null, filter.ruleId ?? null, filter.state ?? null, filter.unacknowledged ?? false];
  const [list, count] = await Promise.all([
    db.query<EventRow>(`${EVENT_SELECT} WHERE ${where} ORDER BY e.fired_at DESC, e.id DESC LIMIT $7 OFFSET $8`, [...values, page.limit, page.offset]),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM alert_events e WHERE ${where}`, values),
  ]);
  return { rows: (await withInstrumentNames(db, organizationId, list.rows)).map(toAlertEvent), total: count.rows[0]!.total };
}

export async function alertSummary(db: Db, organizationId: number): Promise<{ firing: number; unacknowledged: number }> {
  const { rows } = await db.query<{ firing: number; unacknowledged: number }>(
    `SELECT count(*) FILTER (WHERE resolved_at IS NULL)::int AS firing, count(*) FILTER (WHERE acknowledged_at IS NULL)::int AS unacknowledged
       FROM alert_events WHERE organization_id = $1`, [organizationId]);
  return rows[0]!;
}

export async function acknowledgeAlertEvent(client: pg.PoolClient, organizationId: number, id: number, userId: number, comment: string): Promise<void> {
  await client.query(
    'UPDATE alert_events SET acknowledged_at = now(), acknowledged_by = $3, acknowledgement = $4 WHERE id = $1 AND organization_id = $2',
    [id, organizationId, userId, comment]);
}

/** Whether the organisation requires an electronic signature to acknowledge an alert. */
export async function acknowledgementRequiresSignature(db: Db, organizationId: number, options: { forUpdate?: boolean } = {}): Promise<boolean> {
  const { rows } = await db.query<{ required: boolean }>(
    `SELECT alert_acknowledgement_requires_signature AS required FROM organizations WHERE id = $1${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [organizationId]);
  return rows[0]?.required ?? false;
}

export async function setAcknowledgementRequiresSignature(client: pg.PoolClient, organizationId: number, required: boolean): Promise<void> {
  await client.query('UPDATE organizations SET alert_acknowledgement_requires_signature = $2, updated_at = now() WHERE id = $1', [organizationId, required]);
}

export async function quietHoursOf(db: Db, userId: number): Promise<QuietHours | null> {
  const { rows } = await db.query<QuietHours>('SELECT start_minute, end_minute, time_zone FROM alert_quiet_hours WHERE user_id = $1', [userId]);
  return rows[0] ?? null;
}

export async function saveQuietHours(db: Db, userId: number, quiet: QuietHours | null): Promise<void> {
  if (quiet === null) {
    await db.query('DELETE FROM alert_quiet_hours WHERE user_id = $1', [userId]);
    return;
  }
  await db.query(
    `INSERT INTO alert_quiet_hours (user_id, start_minute, end_minute, time_zone) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET start_minute = EXCLUDED.start_minute, end_minute = EXCLUDED.end_minute, time_zone = EXCLUDED.time_zone`,
    [userId, quiet.start_minute, quiet.end_minute, quiet.time_zone]);
}
