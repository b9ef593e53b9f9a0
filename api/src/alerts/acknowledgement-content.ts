/**
 * What a signed acknowledgement signs: the firing as it was acknowledged, as one canonical document,
 * and its SHA-256. The document holds what the acknowledger saw and said: the firing's rule, series,
 * unit operation, run, times, value and message, and the acknowledgement (when, by whom, the comment).
 * It leaves out what moves on its own after the acknowledgement (the resolution time, the rule's and
 * instrument's current names), so a signature stays valid until the firing's recorded facts change.
 * The record's type and id are part of the document, so a hash cannot be carried over to another firing.
 */
import type { AlertEvent } from '@bioprocess/shared/alerts';
import { canonicalJson } from '../signatures/canonical-json.ts';
import { sha256Hex } from '../signatures/run-content.ts';

export const ALERT_ACKNOWLEDGEMENT_CONTENT_VERSION = 1;

/** The meaning an acknowledgement is signed with: the built-in "Reviewed" (the signer reviewed the firing). */
export const ACKNOWLEDGEMENT_SIGNATURE_MEANING = 'reviewed';

type AcknowledgedFacts = Pick<AlertEvent,
  'id' | 'organization_id' | 'rule_id' | 'condition_kind' | 'instrument_id' | 'unit_operation_id' | 'run_id' | 'started_at' | 'fired_at'
  | 'value' | 'message' | 'acknowledged_at' | 'acknowledged_by' | 'acknowledgement'>;

export function alertAcknowledgementDocument(event: AcknowledgedFacts): unknown {
  return {
    content_version: ALERT_ACKNOWLEDGEMENT_CONTENT_VERSION,
    record_type: 'alert_event',
    alert_event: {
      id: event.id, organization_id: event.organization_id, rule_id: event.rule_id, condition_kind: event.condition_kind,
      instrument_id: event.instrument_id, unit_operation_id: event.unit_operation_id, run_id: event.run_id,
      started_at: event.started_at, fired_at: event.fired_at, message: event.message,
      // A reading can be NaN or infinite, which JSON cannot hold: such a value is signed as its text.
      value: event.value === null || Number.isFinite(event.value) ? event.value : String(event.value),
    },
    acknowledgement: { at: event.acknowledged_at, by: event.acknowledged_by, comment: event.acknowledgement },
  };
}

export function alertAcknowledgementHash(event: AcknowledgedFacts): string {
  return sha256Hex(canonicalJson(alertAcknowledgementDocument(event)));
}
