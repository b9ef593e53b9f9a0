/**
 * The All runs page (/runs/overview): the run cards, Export Data (records), Create Run,
 * and the filterable runs table. Under 1200 px the page buttons collapse into a menu.
 */
import { Button, Callout, Card, Elevation, H4, Intent, Menu, MenuItem, PopoverNext, Spinner, Tag } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { showToast } from '../components/toaster.ts';
import { RunSummaryCards } from '../dashboard/RunSummaryCards.tsx';
import { applyFilters, describeFilter, type RunFilter } from '../entities/run-filters.ts';
import { nameLookup, useFacilities, useRuns } from '../entities/queries.ts';
import { RecordsExportDialog } from '../exports/RecordsExportDialog.tsx';
import { RunFilterControl } from './RunFilterControl.tsx';
import { RunsTable } from './RunsTable.tsx';
import { useNarrowLayout } from './useNarrowLayout.ts';
import { useRunActions } from './useRunActions.tsx';
import '../dashboard/dashboard.css';

export function RunsOverviewPage() {
  const { permissions } = useAuth();
  const runs = useRuns();
  const facilities = useFacilities();
  const actions = useRunActions();
  const narrow = useNarrowLayout();
  const [filters, setFilters] = useState<RunFilter[]>([]);
  const [exportOpen, setExportOpen] = useState(false);
  const facilityName = useMemo(() => nameLookup(facilities.data, 'Facility'), [facilities.data]);
  const visible = useMemo(() => applyFilters(runs.data ?? [], filters), [runs.data, filters]);

  useEffect(() => {
    if (!runs.error) return;
    console.error('Failed to fetch runs data', runs.error);
    showToast({ title: 'Failed to fetch runs data', intent: 'danger' });
  }, [runs.error]);

  const buttons = narrow ? (
    (permissions.canExport || permissions.canCreate) ? (
      <PopoverNext placement="bottom-end" content={(
        <Menu>
          {permissions.canCreate ? <MenuItem icon="add" text="Create Run" onClick={actions.create} /> : null}
          {permissions.canExport ? <MenuItem icon="export" text="Export Data" onClick={() => setExportOpen(true)} /> : null}
        </Menu>
      )}>
        <Button icon="menu" endIcon="caret-down" text="Actions" aria-label="Run actions" />
      </PopoverNext>
    ) : null
  ) : (
    <>
      {permissions.canExport ? <Button icon="export" text="Export Data" variant="outlined" onClick={() => setExportOpen(true)} /> : null}
      {permissions.canCreate ? <Button icon="add" intent={Intent.PRIMARY} text="Create Run" onClick={actions.create} /> : null}
    </>
  );

  return (
    <div className="app-page">
      <PageHeader title="All Runs" subtitle="Every run of your organisation, with its status and scale." actions={buttons} />
      {runs.error ? <Callout intent={Intent.DANGER} icon="error" className="app-page-callout">Failed to fetch runs data</Callout> : null}
      <RunSummaryCards runs={runs.error ? [] : runs.data} />
      <Card elevation={Elevation.ONE} className="app-section-card">
        <div className="app-section-card-header">
          <H4>Runs</H4>
        </div>
        <div className="app-filter-bar">
          <RunFilterControl runs={runs.data ?? []} onAdd={(filter) => setFilters((current) => [...current, filter])} />
          {filters.map((filter, index) => (
            <Tag key={`${describeFilter(filter)}-${index}`} large minimal intent={Intent.PRIMARY} data-testid="active-filter"
              onRemove={() => setFilters((current) => current.filter((_, position) => position !== index))}>
              {describeFilter(filter)}
            </Tag>
          ))}
          {filters.length > 0 ? <Button variant="minimal" size="small" text="Clear filters" onClick={() => setFilters([])} /> : null}
          <span className="app-filter-count bp6-text-muted" data-testid="runs-count">
            {runs.data ? `${visible.length} of ${runs.data.length} runs` : ''}
          </span>
        </div>
        {runs.isLoading ? <div className="app-table-empty"><Spinner size={28} /></div> : (
          <RunsTable runs={visible} facilityName={facilityName} canEdit={permissions.canEdit} onEdit={actions.edit} onDelete={actions.remove}
            maxHeight={600} emptyTitle={filters.length > 0 ? 'No runs match the filters' : 'No runs yet'}
            emptyDescription={filters.length > 0 ? 'Remove a filter to see more runs.' : undefined} />
        )}
      </Card>
      {permissions.canExport ? <RecordsExportDialog isOpen={exportOpen} onClose={() => setExportOpen(false)} /> : null}
      {actions.dialogs}
    </div>
  );
}
