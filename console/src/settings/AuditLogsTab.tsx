/** Audit Logs: the events of the last 7 days (at most 50) and the CSV export as a file download. */
import { Button, Callout, HTMLTable, Intent, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { subDays } from 'date-fns';
import { useState } from 'react';
import { useApi } from '../api/hooks.ts';
import { getToken } from '../auth/session-store.ts';
import { showToast } from '../components/toaster.ts';
import { fileStamp, formatDate, timeZoneName } from '../dates/date-time-format.ts';
import { auditLogListSchema, type AuditLog } from '../entities/types.ts';
import { AUDIT_EXPORT_PATH, auditLogsPath } from './audit-logs.ts';

async function downloadAuditCsv(): Promise<void> {
  const response = await fetch(AUDIT_EXPORT_PATH, { headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'text/csv' } });
  if (!response.ok) throw new Error(`Export answered ${response.status}`);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `audit-logs-${fileStamp()}.csv`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  // Revoked later: some browsers read the blob after the click handler returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** "instrument 'pH probe'" when the resource has a name, else its type and id. */
function describeResource(entry: AuditLog): string {
  if (!entry.resourceType) return '-';
  const type = entry.resourceType.replace(/_/g, ' ');
  if (entry.resourceName) return `${type} '${entry.resourceName}'`;
  return entry.resourceId ? `${type} #${entry.resourceId}` : type;
}

export function AuditLogsTab() {
  // Fixed when the tab opens, so the SWR key stays the same between renders.
  const [since] = useState(() => subDays(new Date(), 7));
  const logs = useApi<AuditLog[]>(auditLogsPath(since), auditLogListSchema);
  const [exporting, setExporting] = useState(false);

  const exportCsv = async () => {
    setExporting(true);
    try {
      await downloadAuditCsv();
      showToast({ title: 'Export successful', intent: 'success' });
    } catch (cause) {
      console.error('Export failed', cause);
      showToast({ title: 'Export failed', message: cause instanceof Error ? cause.message : undefined, intent: 'danger' });
    } finally {
      setExporting(false);
    }
  };

  return (
    <div className="app-settings-panel">
      <div className="app-settings-panel-head">
        <div>
          <h3 className="app-settings-panel-title">Audit Logs</h3>
          <p className="bp6-text-muted">The latest 50 events of the last 7 days. The export holds the complete log.</p>
        </div>
        <div className="app-settings-panel-actions">
          <Button icon="refresh" text="Refresh" variant="outlined" onClick={() => void logs.mutate()} />
          <Button icon="download" intent={Intent.PRIMARY} text="Export CSV" loading={exporting} onClick={() => void exportCsv()} />
        </div>
      </div>
      {logs.error ? <Callout intent={Intent.DANGER} icon="error">Failed to load audit logs: {logs.error.message}</Callout> : null}
      {logs.isLoading ? <Spinner size={28} /> : null}
      {logs.data && logs.data.length === 0 ? <NonIdealState icon="history" title="No events in the last 7 days" /> : null}
      {logs.data && logs.data.length > 0 ? (
        <div className="app-settings-table-scroll">
          <HTMLTable striped compact className="app-settings-table" data-testid="audit-table">
            <thead>
              <tr><th>Time ({timeZoneName()})</th><th>Event</th><th>Action</th><th>Resource</th><th>User</th><th>Result</th></tr>
            </thead>
            <tbody>
              {logs.data.map((entry) => (
                <tr key={entry.id}>
                  <td className="app-nowrap">{formatDate(entry.createdAt, 'dateTimeSeconds')}</td>
                  <td><Tag minimal>{entry.eventType}</Tag></td>
                  <td>{entry.action}</td>
                  <td>{describeResource(entry)}</td>
                  <td>{entry.userEmail ?? '-'}</td>
                  <td>{entry.success ? <Tag intent={Intent.SUCCESS} minimal round>success</Tag> : <Tag intent={Intent.DANGER} minimal round>failed</Tag>}</td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        </div>
      ) : null}
    </div>
  );
}
