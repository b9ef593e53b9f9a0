/** The audit-log calls of the settings page: last 7 days, 50 events; CSV export. */
export const AUDIT_LOG_VIEW_LIMIT = 50;
export const AUDIT_EXPORT_PATH = '/api/v1/audit/logs/export?format=csv';

export function auditLogsPath(since: Date): string {
  return `/api/v1/audit/logs?limit=${AUDIT_LOG_VIEW_LIMIT}&start_date=${encodeURIComponent(since.toISOString())}`;
}
