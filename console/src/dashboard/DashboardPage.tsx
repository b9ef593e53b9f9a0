/** The dashboard: the four run cards and the Recent Runs table. */
import { Button, Callout, Card, Elevation, H4, Intent, Spinner } from '@blueprintjs/core';
import { useEffect, useMemo } from 'react';
import { useNavigate } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { showToast } from '../components/toaster.ts';
import { nameLookup, useFacilities, useRuns } from '../entities/queries.ts';
import type { Run } from '../entities/types.ts';
import { RunsTable } from '../runs/RunsTable.tsx';
import { useRunActions } from '../runs/useRunActions.tsx';
import { RunSummaryCards } from './RunSummaryCards.tsx';

export const RECENT_RUNS_COUNT = 10;

/** Most recent first: by start time, runs not started yet by when they were created. */
function recency(run: Run): number {
  return Date.parse(run.startTime ?? run.createdAt) || 0;
}

export function DashboardPage() {
  const { user, permissions } = useAuth();
  const navigate = useNavigate();
  const runs = useRuns();
  const facilities = useFacilities();
  const actions = useRunActions();
  const facilityName = useMemo(() => nameLookup(facilities.data, 'Facility'), [facilities.data]);
  const recent = useMemo(() => [...(runs.data ?? [])].sort((a, b) => recency(b) - recency(a)).slice(0, RECENT_RUNS_COUNT), [runs.data]);

  useEffect(() => {
    if (!runs.error) return;
    console.error('Failed to fetch runs data', runs.error);
    showToast({ title: 'Failed to fetch runs data', intent: 'danger' });
  }, [runs.error]);
  const firstName = user?.name?.split(' ')[0];

  return (
    <div className="app-page">
      <PageHeader title="Dashboard" subtitle={firstName ? `Welcome back, ${firstName}. Here is how your runs are doing.` : 'An overview of your runs.'} />
      {runs.error ? <Callout intent={Intent.DANGER} icon="error" className="app-page-callout">Failed to fetch runs data</Callout> : null}
      <RunSummaryCards runs={runs.error ? [] : runs.data} />
      <Card elevation={Elevation.ONE} className="app-section-card">
        <div className="app-section-card-header">
          <H4>Recent Runs</H4>
          <Button variant="minimal" intent={Intent.PRIMARY} endIcon="arrow-right" text="View all runs" onClick={() => navigate('/runs/overview')} />
        </div>
        {runs.isLoading ? <div className="app-table-empty"><Spinner size={28} /></div> : (
          <RunsTable runs={recent} facilityName={facilityName} canEdit={permissions.canEdit} onEdit={actions.edit} onDelete={actions.remove}
            sortable={false} maxHeight={RECENT_RUNS_COUNT * 41 + 44} emptyTitle="No runs yet"
            emptyDescription={permissions.canCreate ? 'Create a run on the All runs page to get started.' : undefined} />
        )}
      </Card>
      {actions.dialogs}
    </div>
  );
}
