/** The Alerts section of a run's page: the run's firings, acknowledged there by editors. */
import { Card, H4, Tag } from '@blueprintjs/core';
import { useAuth } from '../auth/useAuth.ts';
import { useRevalidate } from '../entities/queries.ts';
import { AlertEventsTable } from './AlertEventsTable.tsx';
import './alerts.css';
import { ALERT_EVENTS_PATH, ALERT_SUMMARY_PATH, alertEventsPath, useAlertEvents } from './alert-queries.ts';

export function RunAlertsCard({ runId }: { runId: number }) {
  const { permissions } = useAuth();
  const events = useAlertEvents(alertEventsPath({ runId }));
  const revalidate = useRevalidate();
  const firing = events.data?.filter((event) => event.state === 'firing').length ?? 0;
  return (
    <Card className="run-alerts-card" data-testid="run-alerts">
      <H4>Alerts {firing > 0 ? <Tag intent="danger" round>{firing} firing</Tag> : <Tag minimal round>{events.data?.length ?? 0}</Tag>}</H4>
      <AlertEventsTable events={events.data} loading={events.isLoading} error={events.error} canAcknowledge={permissions.canEdit} showRun={false}
        emptyText="No alert has fired in this run." onChanged={() => void revalidate(ALERT_EVENTS_PATH, ALERT_SUMMARY_PATH)} />
    </Card>
  );
}
