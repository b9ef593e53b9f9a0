/** Audit Logs: the events of the last 7 days (at most 50) and the CSV export as a file download. */
import { Button, HTMLTable, Intent, Tag } from '@blueprintjs/core';
import { subDays } from 'date-fns';
import { useState } from 'react';
import { useApi } from '../api/hooks.ts';
import { getToken } from '../auth/session-store.ts';
import { fileStamp, formatDate, timeZoneName } from '../dates/date-time-format.ts';
import { auditLogListSchema, type AuditLog } from '../entities/types.ts';
import { AUDIT_EXPORT_PATH, auditLogsPath } from './audit-logs.ts';
import { useSettingsAction } from './use-settings-action.ts';
import { SettingsList, SettingsPanel } from './SettingsPanel.tsx';

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

/** The reason for change given with the event: its pick-list entry, then the person's words. */
function describeReason(entry: AuditLog): string {
  const parts = [entry.changeReasonCode, entry.changeReason].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join(': ') : '-';
}

export function AuditLogsTab() {
  // Fixed when the tab opens, so the SWR key stays the same between renders.
  const [since] = useState(() => subDays(new Date(), 7));
  const logs = useApi<AuditLog[]>(auditLogsPath(since), auditLogListSchema);
  const { busy: exporting, run } = useSettingsAction();

  const exportCsv = () => run(downloadAuditCsv, { success: 'Export successful', failure: 'Export failed' });

  return (
    <SettingsPanel title="Audit Logs" description="The latest 50 events of the last 7 days. The export holds the complete log."
      actions={(
        <div className="app-settings-panel-actions">
          <Button icon="refresh" text="Refresh" variant="outlined" onClick={() => void logs.mutate()} />
          <Button icon="download" intent={Intent.PRIMARY} text="Export CSV" loading={exporting} onClick={() => void exportCsv()} />
        </div>
      )}>
      <SettingsList list={logs} noun="audit logs" emptyIcon="history" emptyTitle="No events in the last 7 days">
        {(rows) => (
          <HTMLTable striped compact className="app-settings-table" data-testid="audit-table">
            <thead>
              <tr><th>Time ({timeZoneName()})</th><th>Event</th><th>Action</th><th>Resource</th><th>User</th><th>Reason</th><th>Result</th></tr>
            </thead>
            <tbody>
              {rows.map((entry) => (
                <tr key={entry.id}>
                  <td className="app-nowrap">{formatDate(entry.createdAt, 'dateTimeSeconds')}</td>
                  <td><Tag minimal>{entry.eventType}</Tag></td>
                  <td>{entry.action}</td>
                  <td>{describeResource(entry)}</td>
                  <td>{entry.userEmail ?? '-'}</td>
                  <td className="app-audit-reason">{describeReason(entry)}</td>
                  <td>{entry.success ? <Tag intent={Intent.SUCCESS} minimal round>success</Tag> : <Tag intent={Intent.DANGER} minimal round>failed</Tag>}</td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        )}
      </SettingsList>
    </SettingsPanel>
  );
}
