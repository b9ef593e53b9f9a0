/**
 * Alert evaluation as points arrive: for one announcement of stored points, the rules of the
 * organisation whose scope covers the announced instruments read the announced range (with the read
 * rule: the newest version of each reading, tombstones dropped) and advance each (rule, series) state.
 * Every transition of one announcement commits in one PostgreSQL transaction together with the
 * announcement's id (alert_applied_announcements): an announcement applied twice (its evaluator died
 * before acknowledging it) changes nothing the second time, and a firing is neither lost nor doubled.
 *
 * "No data" cannot wait for an arrival: checkSilence runs on a timer over the series of running unit
 * operations that no-data rules watch, and only for that condition.
 */
import type pg from 'pg';
import { alertConditionSchema, type AlertCondition } from '@bioprocess/shared/alerts';
import { listInstrumentsById, listInstrumentsOfEquipment, type InstrumentRow } from '@bioprocess/shared/server/instruments-repository';
import type { PointsStoredAnnouncement } from '@bioprocess/shared/server/points-stored';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { listUnitOperationsOnEquipmentBetween, listUnitOperationsRunningAt } from '@bioprocess/shared/server/unit-operations-repository';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { AppDeps } from '../platform/deps.ts';
import { dedupedPoints, queryRows } from '../timeseries/points-read.ts';
import { advance, describeFiring, holdMsOf, judgeRates, meetsThreshold, type Judged, type SeriesState, type Transition } from './conditions.ts';
import { GoldenBands, outsideBand } from './golden-band.ts';
import { notifyFiring } from './notifications.ts';
import { HttpError } from '../platform/http-error.ts';

type Deps = Pick<AppDeps, 'pg' | 'clickhouse'> & { logger: Logger };

interface RuleRow {
  id: string;
  organization_id: string;
  name: string;
  instrument_type: string | null;
  unit_operation_type: string | null;
  run_id: string | null;
  condition: unknown;
  email_user_ids: string[];
  webhook_url: string | null;
  group_window_seconds: number;
}

interface Rule {
  id: number;
  organizationId: number;
  instrumentType: string | null;
  unitOperationType: string | null;
  runId: number | null;
  condition: AlertCondition;
  emailUserIds: number[];
  webhookUrl: string | null;
  groupWindowSeconds: number;
}

interface Instrument {
  id: number;
  name: string;
  type: string;
  equipmentId: number;
}

interface UnitOperation {
  id: number;
  runId: number;
  type: string;
  equipmentId: number;
  startMs: number;
  endMs: number | null;
}

interface Reading {
  ts: number;
  value: number;
}

const RULE_COLUMNS = 'id, organization_id, name, instrument_type, unit_operation_type, run_id, condition, email_user_ids, webhook_url, group_window_seconds';

function toRule(row: RuleRow, logger: Logger): Rule | null {
  const condition = alertConditionSchema.safeParse(row.condition);
  if (!condition.success) {
    logger.warn({ ruleId: row.id }, 'alert rule with a condition that does not parse: skipped');
    return null;
  }
  return {
    id: Number(row.id), organizationId: Number(row.organization_id), instrumentType: row.instrument_type, unitOperationType: row.unit_operation_type,
    runId: row.run_id === null ? null : Number(row.run_id), condition: condition.data, emailUserIds: row.email_user_ids.map(Number),
    webhookUrl: row.webhook_url, groupWindowSeconds: row.group_window_seconds,
  };
}

const toInstrument = (row: InstrumentRow): Instrument => ({ id: row.id, name: row.name, type: row.type, equipmentId: row.equipment_id });

const matchesType = (rule: Rule, instrument: Instrument) => rule.instrumentType === null || rule.instrumentType.toLowerCase() === instrument.type.toLowerCase();

/** The unit operation an instrument's reading at `ts` belongs to: the one running on its equipment then. */
function unitOperationAt(unitOperations: readonly UnitOperation[], equipmentId: number, ts: number): UnitOperation | null {
  return unitOperations.find((uo) => uo.equipmentId === equipmentId && uo.startMs <= ts && (uo.endMs === null || ts <= uo.endMs)) ?? null;
}

/** Whether a reading in this unit operation (or in none) is in the rule's scope. */
function inScope(rule: Rule, unitOperation: UnitOperation | null): boolean {
  if (rule.unitOperationType === null && rule.runId === null) return true;
  if (unitOperation === null) return false;
  return (rule.unitOperationType === null || rule.unitOperationType === unitOperation.type) && (rule.runId === null || rule.runId === unitOperation.runId);
}

export interface Applied {
  /** false when the announcement had been applied before (nothing changed). */
  applied: boolean;
  fired: number;
  resolved: number;
}

export class AlertEvaluator {
  readonly bands: GoldenBands;

  constructor(private readonly deps: Deps, private readonly now: () => number = Date.now) {
    this.bands = new GoldenBands(deps, now);
  }

  private async rulesOf(organizationId: number | null, kinds: 'arrival' | 'no_data'): Promise<Rule[]> {
    const { rows } = await this.deps.pg.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM alert_rules
        WHERE enabled AND ($1::bigint IS NULL OR organization_id = $1) AND (condition->>'kind' = 'no_data') = $2 ORDER BY id`,
      [organizationId, kinds === 'no_data']);
    return rows.flatMap((row) => toRule(row, this.deps.logger) ?? []);
  }

  /** Applies one announcement; answers what changed. */
  async apply(announcement: PointsStoredAnnouncement): Promise<Applied> {
    const none: Applied = { applied: true, fired: 0, resolved: 0 };
    // A removed range removes readings: no reading arrives, so no state moves.
    if (announcement.kind !== 'points') return none;
    const organizationId = announcement.organizationId;
    const [arrivalRules, silenceRules] = await Promise.all([this.rulesOf(organizationId, 'arrival'), this.rulesOf(organizationId, 'no_data')]);
    const rules = [...arrivalRules, ...silenceRules];
    if (rules.length === 0) return none;
    const instruments = (await listInstrumentsById(this.deps.pg, organizationId, announcement.instrumentIds)).map(toInstrument);
    const pairs = rules.flatMap((rule) => instruments.filter((instrument) => matchesType(rule, instrument)).map((instrument) => ({ rule, instrument })));
    if (pairs.length === 0) return none;

    const lookbackMs = Math.max(0, ...rules.map((rule) => (rule.condition.kind === 'rate_of_change' ? rule.condition.window_seconds * 1000 : 0)));
    const fromMs = announcement.fromMs - lookbackMs;
    const unitOperations = await this.unitOperationsOf(organizationId, [...new Set(pairs.map((pair) => pair.instrument.equipmentId))], fromMs, announcement.toMs);
    const readings = await this.readingsOf(organizationId, [...new Set(pairs.map((pair) => pair.instrument.id))], fromMs, announcement.toMs);

    // What each pair's readings say, judged before the transaction (golden bands read ClickHouse).
    const judgedByPair = new Map<string, Judged[]>();
    for (const { rule, instrument } of pairs) {
      const own = (readings.get(instrument.id) ?? []).filter((reading) => inScope(rule, unitOperationAt(unitOperations, instrument.equipmentId, reading.ts)));
      if (own.length === 0) continue;
      judgedByPair.set(`${rule.id}:${instrument.id}`, await this.judge(rule, instrument, own, unitOperations, announcement.fromMs));
    }
    if (judgedByPair.size === 0) return none;

    return withTransaction(this.deps.pg, async (client) => {
      const first = await client.query('INSERT INTO alert_applied_announcements (entry_id) VALUES ($1) ON CONFLICT DO NOTHING', [announcement.id]);
      if (first.rowCount === 0) return { applied: false, fired: 0, resolved: 0 };
      const judgedPairs = pairs.filter(({ rule, instrument }) => judgedByPair.has(`${rule.id}:${instrument.id}`));
      const states = await lockStates(client, organizationId, judgedPairs.map(({ rule, instrument }) => [rule.id, instrument.id]));
      const result: Applied = { applied: true, fired: 0, resolved: 0 };
      for (const { rule, instrument } of judgedPairs) {
        const key = `${rule.id}:${instrument.id}`;
        const current = states.get(key)!;
        const judged = judgedByPair.get(key)!;
        result.fired += await this.recordLateEpisodes(client, rule, instrument, current, judged, unitOperations);
        const { next, transitions } = advance(current, judged, holdMsOf(rule.condition));
        for (const transition of transitions) {
          if (transition.kind === 'fire') result.fired += 1;
          else result.resolved += 1;
          await this.record(client, rule, instrument, transition, unitOperationAt(unitOperations, instrument.equipmentId, transition.kind === 'fire' ? transition.firedMs : transition.resolvedMs));
        }
        await saveState(client, rule.id, instrument.id, next);
      }
      return result;
    });
  }

  /** Readings judged against the rule's condition (only those from `newFromMs` on are new; earlier ones serve rates). */
  private async judge(rule: Rule, instrument: Instrument, readings: readonly Reading[], unitOperations: readonly UnitOperation[], newFromMs: number): Promise<Judged[]> {
    const condition = rule.condition;
    switch (condition.kind) {
      case 'threshold':
        return readings.filter((reading) => reading.ts >= newFromMs).map((reading) => ({ ...reading, meets: meetsThreshold(condition, reading.value) }));
      case 'rate_of_change':
        return judgeRates(condition, readings).filter((reading) => reading.ts >= newFromMs);
      case 'no_data':
        return readings.filter((reading) => reading.ts >= newFromMs).map((reading) => ({ ...reading, meets: false }));
      case 'golden_band': {
        const band = await this.bands.band(rule.organizationId, condition.golden_batch_id, instrument.type).catch(noBandWhenRefused);
        const judged: Judged[] = [];
        for (const reading of readings) {
          if (reading.ts < newFromMs) continue;
          const unitOperation = unitOperationAt(unitOperations, instrument.equipmentId, reading.ts);
          const timeZero = band && unitOperation
            ? await this.bands.timeZero(rule.organizationId, condition.golden_batch_id, unitOperation.id).catch(noBandWhenRefused)
            : null;
          judged.push({ ...reading, meets: band && timeZero !== null ? outsideBand(band, timeZero, reading.ts, reading.value) : null });
        }
        return judged;
      }
    }
  }

  /**
   * Readings older than the newest one a state applied (history posted after live readings, a late
   * feed) cannot move the state, but an episode wholly inside them (it fired and cleared there) is
   * recorded as a resolved firing and notified, once: an episode already recorded (same start) is not.
   */
  private async recordLateEpisodes(
    client: pg.PoolClient, rule: Rule, instrument: Instrument, current: SeriesState, judged: readonly Judged[], unitOperations: readonly UnitOperation[],
  ): Promise<number> {
    if (current.lastPointMs === null || rule.condition.kind === 'no_data') return 0;
    const late = judged.filter((reading) => reading.ts <= current.lastPointMs!);
    if (late.length === 0) return 0;
    const { transitions } = advance({ state: 'ok', sinceMs: null, lastPointMs: null }, late, holdMsOf(rule.condition));
    let recorded = 0;
    for (let at = 0; at + 1 < transitions.length; at += 2) {
      const fire = transitions[at]!;
      const resolve = transitions[at + 1]!;
      if (fire.kind !== 'fire' || resolve.kind !== 'resolve') continue;
      const known = await client.query('SELECT 1 FROM alert_events WHERE rule_id = $1 AND instrument_id = $2 AND started_at = to_timestamp($3 / 1000.0)',
        [rule.id, instrument.id, fire.startedMs]);
      if (known.rowCount !== 0) continue;
      await this.record(client, rule, instrument, fire, unitOperationAt(unitOperations, instrument.equipmentId, fire.firedMs), resolve.resolvedMs);
      recorded += 1;
    }
    return recorded;
  }

  /** Opens (or, with `resolvedMs`, records as already resolved) a firing and notifies it; or resolves the open one. */
  private async record(client: pg.PoolClient, rule: Rule, instrument: Instrument, transition: Transition, unitOperation: UnitOperation | null, resolvedMs: number | null = null): Promise<void> {
    if (transition.kind === 'resolve') {
      await client.query(
        'UPDATE alert_events SET resolved_at = to_timestamp($3 / 1000.0) WHERE rule_id = $1 AND instrument_id = $2 AND resolved_at IS NULL',
        [rule.id, instrument.id, transition.resolvedMs]);
      return;
    }
    const value = rule.condition.kind === 'no_data' ? null : transition.value;
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO alert_events (organization_id, rule_id, instrument_id, unit_operation_id, run_id, started_at, fired_at, value, message, resolved_at)
       VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), to_timestamp($7 / 1000.0), $8, $9, to_timestamp($10 / 1000.0)) RETURNING id`,
      [rule.organizationId, rule.id, instrument.id, unitOperation?.id ?? null, unitOperation?.runId ?? null, transition.startedMs, transition.firedMs,
        value, describeFiring(rule.condition, instrument.name, value), resolvedMs]);
    await notifyFiring(client, {
      eventId: Number(rows[0]!.id), organizationId: rule.organizationId, ruleId: rule.id, runId: unitOperation?.runId ?? null,
      groupWindowSeconds: rule.groupWindowSeconds, emailUserIds: rule.emailUserIds, webhookUrl: rule.webhookUrl,
    }, this.now());
  }

  private async unitOperationsOf(organizationId: number, equipmentIds: readonly number[], fromMs: number, toMs: number): Promise<UnitOperation[]> {
    const rows = await listUnitOperationsOnEquipmentBetween(this.deps.pg, organizationId, equipmentIds, fromMs, toMs);
    return rows.map((row) => ({
      id: row.id, runId: row.run_id, type: row.type, equipmentId: row.equipment_id, startMs: row.start_time.getTime(), endMs: row.end_time?.getTime() ?? null,
    }));
  }

  /**
   * Each instrument in the rule's scope on the equipment of each unit operation running at `nowMs`
   * (of the rule's type, in its run, when it names them), with that unit operation; by instrument.
   */
  private async silenceCandidatesOf(rule: Rule, nowMs: number): Promise<Array<{ instrument: Instrument; unitOperation: UnitOperation }>> {
    const running = await listUnitOperationsRunningAt(this.deps.pg, rule.organizationId, nowMs, { type: rule.unitOperationType, runId: rule.runId });
    const onEquipment = running.filter((row) => row.equipment_id !== null);
    const instruments = await listInstrumentsOfEquipment(this.deps.pg, rule.organizationId, [...new Set(onEquipment.map((row) => row.equipment_id!))], rule.instrumentType);
    return onEquipment
      .flatMap((row) => instruments.filter((instrument) => instrument.equipment_id === row.equipment_id).map((instrument) => ({
        instrument: toInstrument(instrument),
        unitOperation: { id: row.id, runId: row.run_id, type: row.type, equipmentId: instrument.equipment_id, startMs: row.start_time.getTime(), endMs: null },
      })))
      .sort((a, b) => a.instrument.id - b.instrument.id || a.unitOperation.id - b.unitOperation.id);
  }

  private async readingsOf(organizationId: number, instrumentIds: readonly number[], fromMs: number, toMs: number): Promise<Map<number, Reading[]>> {
    const rows = await queryRows<[string, string, number | null, number]>(this.deps.clickhouse,
      `SELECT instrument_id, ts, v, d FROM (${dedupedPoints(organizationId, [{ instrumentIds, from: fromMs, to: toMs }])}) ORDER BY instrument_id, ts`);
    const readings = new Map<number, Reading[]>();
    for (const [instrument, ts, value, deleted] of rows) {
      if (Number(deleted) === 1 || value === null) continue;
      const id = Number(instrument);
      const list = readings.get(id) ?? [];
      list.push({ ts: Number(ts), value });
      readings.set(id, list);
    }
    return readings;
  }

  /**
   * Fires the no-data rules whose series (instruments in scope on the equipment of a unit operation
   * running at `nowMs`) had no reading for their period: since their last reading, or since the unit
   * operation started. A reading arriving later resolves it (apply). Answers the firings.
   */
  async checkSilence(nowMs: number = this.now()): Promise<number> {
    const rules = await this.rulesOf(null, 'no_data');
    let fired = 0;
    for (const rule of rules) {
      if (rule.condition.kind !== 'no_data') continue;
      const periodMs = rule.condition.period_seconds * 1000;
      const candidates = await this.silenceCandidatesOf(rule, nowMs);
      if (candidates.length === 0) continue;
      fired += await withTransaction(this.deps.pg, async (client) => {
        const states = await lockStates(client, rule.organizationId, candidates.map(({ instrument }) => [rule.id, instrument.id]));
        let firedHere = 0;
        for (const { instrument, unitOperation } of candidates) {
          const state = states.get(`${rule.id}:${instrument.id}`)!;
          if (state.state === 'firing') continue;
          const lastMs = Math.max(state.lastPointMs ?? -Infinity, unitOperation.startMs);
          if (nowMs - lastMs < periodMs) continue;
          await this.record(client, rule, instrument, { kind: 'fire', startedMs: lastMs, firedMs: nowMs, value: 0 }, unitOperation);
          await saveState(client, rule.id, instrument.id, { state: 'firing', sinceMs: lastMs, lastPointMs: state.lastPointMs });
          firedHere += 1;
        }
        return firedHere;
      });
    }
    // Announcements are delivered again only while pending, minutes at most: a day of ids is plenty.
    await this.deps.pg.query(`DELETE FROM alert_applied_announcements WHERE applied_at < now() - interval '1 day'`);
    return fired;
  }
}

/**
 * A golden batch deleted since the rule was saved, or one Analyze refuses to compute (too many grid
 * times, no reference data), compares nothing: it must not hold up the stream. Other failures retry.
 */
function noBandWhenRefused(error: unknown): null {
  if (error instanceof HttpError && error.statusCode < 500) return null;
  throw error;
}

/** Creates the missing states and locks them all, in key order (evaluators sharing series never deadlock). */
async function lockStates(client: pg.PoolClient, organizationId: number, keys: ReadonlyArray<[ruleId: number, instrumentId: number]>): Promise<Map<string, SeriesState>> {
  const sorted = [...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const ruleIds = sorted.map(([rule]) => rule);
  const instrumentIds = sorted.map(([, instrument]) => instrument);
  await client.query(
    `INSERT INTO alert_states (rule_id, instrument_id, organization_id)
     SELECT r, i, $3 FROM unnest($1::bigint[], $2::bigint[]) AS k(r, i) ORDER BY r, i ON CONFLICT DO NOTHING`,
    [ruleIds, instrumentIds, organizationId]);
  const { rows } = await client.query<{ rule_id: string; instrument_id: string; state: SeriesState['state']; since_ms: string | null; last_point_ms: string | null }>(
    `SELECT s.rule_id, s.instrument_id, s.state, s.since_ms, s.last_point_ms FROM alert_states s
       JOIN unnest($1::bigint[], $2::bigint[]) AS k(r, i) ON s.rule_id = k.r AND s.instrument_id = k.i
      ORDER BY s.rule_id, s.instrument_id FOR UPDATE OF s`,
    [ruleIds, instrumentIds]);
  return new Map(rows.map((row) => [`${row.rule_id}:${row.instrument_id}`, {
    state: row.state, sinceMs: row.since_ms === null ? null : Number(row.since_ms), lastPointMs: row.last_point_ms === null ? null : Number(row.last_point_ms),
  }]));
}

async function saveState(client: pg.PoolClient, ruleId: number, instrumentId: number, state: SeriesState): Promise<void> {
  await client.query(
    'UPDATE alert_states SET state = $3, since_ms = $4, last_point_ms = $5, updated_at = now() WHERE rule_id = $1 AND instrument_id = $2',
    [ruleId, instrumentId, state.state, state.sinceMs, state.lastPointMs]);
}
