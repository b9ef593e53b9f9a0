/** Alerts (/alerts): the organisation's firings, newest first, with acknowledgement, and the rules with their create, edit and delete dialogs. */
import { useState } from 'react';
import { Button, Card, HTMLTable, NonIdealState, Tab, Tabs, Tag } from '@blueprintjs/core';
import { useSearchParams } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { apiRequest } from '../api/client.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { useRevalidate } from '../entities/queries.ts';
import { AlertEventsTable } from './AlertEventsTable.tsx';
import { AlertRuleDialog } from './AlertRuleDialog.tsx';
import {
  ALERT_EVENTS_PATH, ALERT_RULES_PATH, ALERT_SUMMARY_PATH, alertEventsPath, describeCondition, useAlertEvents, useAlertRules, type AlertRuleView,
} from './alert-queries.ts';
import './alerts.css';

export function AlertsPage() {
  const { permissions } = useAuth();
  const [searchParams, setSearchParams] = useSearchParams();
  const view = searchParams.get('view') === 'rules' ? 'rules' : 'firings';
  const events = useAlertEvents(alertEventsPath());
  const rules = useAlertRules();
  const revalidate = useRevalidate();
  const [editing, setEditing] = useState<AlertRuleView | 'new' | null>(null);
  const [deleting, setDeleting] = useState<AlertRuleView | null>(null);
  const refresh = () => void revalidate(ALERT_EVENTS_PATH, ALERT_RULES_PATH, ALERT_SUMMARY_PATH);

  const rulesPanel = (
    <Card>
      {permissions.canCreate ? <Button icon="add" intent="primary" text="New rule" onClick={() => setEditing('new')} className="alerts-new-rule" /> : null}
      {rules.data && rules.data.length > 0 ? (
        <HTMLTable compact striped data-testid="alert-rules-table" style={{ width: '100%', marginTop: 12 }}>
          <thead><tr><th>Name</th><th>Scope</th><th>Condition</th><th>Notifies</th><th /></tr></thead>
          <tbody>
            {rules.data.map((rule) => (
              <tr key={rule.id}>
                <td>{rule.name} {rule.enabled ? null : <Tag minimal>Disabled</Tag>}</td>
                <td>{[rule.instrumentType, rule.unitOperationType, rule.runId ? `run ${rule.runId}` : null].filter(Boolean).join(', ')}</td>
                <td>{describeCondition(rule.condition)}</td>
                <td>{[rule.emailUserIds.length ? `${rule.emailUserIds.length} by email` : null, rule.webhookUrl ? 'webhook' : null].filter(Boolean).join(', ') || 'in the app'}</td>
                <td style={{ textAlign: 'right' }}>
                  {permissions.canEdit ? (
                    <>
                      <Button icon="edit" size="small" aria-label={`Edit ${rule.name}`} onClick={() => setEditing(rule)} />{' '}
                      <Button icon="trash" size="small" intent="danger" aria-label={`Delete ${rule.name}`} onClick={() => setDeleting(rule)} />
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      ) : <NonIdealState icon="notifications" description={rules.isLoading ? 'Loading rules...' : 'No alert rules yet.'} />}
    </Card>
  );

  return (
    <div className="app-page">
      <PageHeader title="Alerts" subtitle="Rules watch every series in their scope as readings arrive; each firing is listed here and on its run." />
      <Tabs id="alerts-tabs" selectedTabId={view} onChange={(tab) => setSearchParams(tab === 'rules' ? { view: 'rules' } : {})}>
        <Tab id="firings" title="Firings" panel={(
          <Card>
            <AlertEventsTable events={events.data} loading={events.isLoading} error={events.error} canAcknowledge={permissions.canEdit} onChanged={refresh} />
          </Card>
        )} />
        <Tab id="rules" title="Rules" panel={rulesPanel} />
      </Tabs>
      <AlertRuleDialog isOpen={editing !== null} rule={editing === 'new' ? null : editing} onClose={() => setEditing(null)}
        onSaved={() => { setEditing(null); refresh(); showToast({ title: 'Alert rule saved', intent: 'success' }); }} />
      <ConfirmDialog isOpen={deleting !== null} title="Delete alert rule" destructive confirmLabel="Delete"
        description={`Delete “${deleting?.name ?? ''}” and its firings?`} onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await apiRequest('DELETE', `${ALERT_RULES_PATH}/${deleting.id}`);
          setDeleting(null);
          refresh();
        }} />
    </div>
  );
}
