/** Alert data of the console: one path per query, so a change knows what to revalidate. */
import { z } from 'zod';
import {
  alertAcknowledgementSettingsSchema, alertEventSchema, alertRuleSchema, alertSummarySchema, type AlertEvent, type AlertRule,
} from '@bioprocess/shared/alerts';
import { useApi } from '../api/hooks.ts';
import type { Camelize } from '../entities/types.ts';

export type AlertEventView = Camelize<AlertEvent>;
export type AlertRuleView = Camelize<AlertRule>;

export const ALERT_EVENTS_PATH = '/api/v1/alert-events';
export const ALERT_RULES_PATH = '/api/v1/alert-rules';
export const ALERT_SUMMARY_PATH = '/api/v1/alerts/summary';
/** Whether acknowledging needs an electronic signature: the acknowledge dialog asks for the password when it does. */
export const ALERT_ACKNOWLEDGEMENT_SETTINGS_PATH = '/api/v1/organization-settings/alert-acknowledgements';
/** Firings arrive while a page is open: lists and the shell's count look again this often. */
const REFRESH_MS = 10_000;

const eventListSchema = z.array(alertEventSchema);
const ruleListSchema = z.array(alertRuleSchema);

export function alertEventsPath(filter: { runId?: number; unitOperationId?: number; limit?: number } = {}): string {
  const query = new URLSearchParams({ limit: String(filter.limit ?? 200) });
  if (filter.runId !== undefined) query.set('run_id', String(filter.runId));
  if (filter.unitOperationId !== undefined) query.set('unit_operation_id', String(filter.unitOperationId));
  return `${ALERT_EVENTS_PATH}?${query}`;
}

export const useAlertEvents = (path: string | null) => useApi<AlertEventView[]>(path, eventListSchema, { refreshInterval: REFRESH_MS });
export const useAlertRules = () => useApi<AlertRuleView[]>(`${ALERT_RULES_PATH}?limit=200`, ruleListSchema);
export const useAlertAcknowledgementSettings = () =>
  useApi<{ requiresSignature: boolean }>(ALERT_ACKNOWLEDGEMENT_SETTINGS_PATH, alertAcknowledgementSettingsSchema);
export const useAlertSummary = () => useApi<{ firing: number; unacknowledged: number }>(ALERT_SUMMARY_PATH, alertSummarySchema, { refreshInterval: REFRESH_MS });

const CONDITION_WORDS: Record<AlertEventView['conditionKind'], string> = {
  threshold: 'Threshold', rate_of_change: 'Rate of change', no_data: 'No data', golden_band: 'Golden band',
};
export const conditionWord = (kind: AlertEventView['conditionKind']) => CONDITION_WORDS[kind];

/** The rule's condition in a few words, for the rules table. */
export function describeCondition(condition: AlertRuleView['condition']): string {
  switch (condition.kind) {
    case 'threshold':
      return `${condition.direction} ${condition.value}${condition.holdSeconds ? ` for ${condition.holdSeconds} s` : ''}`;
    case 'rate_of_change':
      return `${condition.direction} faster than ${condition.perMinute}/min over ${condition.windowSeconds} s`;
    case 'no_data':
      return `no reading for ${condition.periodSeconds} s`;
    case 'golden_band':
      return `outside golden batch #${condition.goldenBatchId}${condition.holdSeconds ? ` for ${condition.holdSeconds} s` : ''}`;
  }
}
