/** The shell's in-app notification: how many firings nobody acknowledged yet, beside the Alerts entry. */
import { Tag } from '@blueprintjs/core';
import { useAlertSummary } from './alert-queries.ts';

export function AlertCountTag() {
  const summary = useAlertSummary();
  const count = summary.data?.unacknowledged ?? 0;
  if (count === 0) return null;
  return <Tag intent="danger" round data-testid="alert-count" aria-label={`${count} alerts not acknowledged`}>{count > 99 ? '99+' : count}</Tag>;
}
