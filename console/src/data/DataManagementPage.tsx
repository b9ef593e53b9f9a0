/**
 * Data management (/data): equipment, facilities and instruments in one searchable,
 * sortable table with a per-entity column toggle, and their create, edit and delete dialogs.
 */
import {
  Button, ButtonGroup, Callout, Card, Checkbox, Elevation, HTMLSelect, HTMLTable, Icon, InputGroup, Intent, NonIdealState, PopoverNext, Spinner,
  Tab, Tabs,
} from '@blueprintjs/core';
import { useSearchParams } from 'react-router-dom';
import { useEffect, useMemo, useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { PageHeader } from '../components/PageHeader.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { apiRequest } from '../api/client.ts';
import { EntityFormDialog } from '../entities/EntityFormDialog.tsx';
import { DerivedParametersPanel } from '../derived/DerivedParametersPanel.tsx';
import { nameLookup, useEquipmentList, useFacilities, useInstruments, useRevalidate } from '../entities/queries.ts';
import { loadHiddenColumns, saveHiddenColumns } from './column-visibility.ts';
import {
  DATA_COLUMNS, DATA_ENTITIES, displayValue, nextSort, searchRows, sortRows, type DataEntityKind, type DataRow, type SortState,
} from './entity-tables.ts';
import '../dashboard/dashboard.css';
import './data.css';

export function DataManagementPage() {
  const { permissions } = useAuth();
  const [kind, setKind] = useState<DataEntityKind>('equipment');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<SortState | null>(null);
  const [hidden, setHidden] = useState<string[]>(() => loadHiddenColumns('equipment'));
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<DataRow | null>(null);
  const [deleting, setDeleting] = useState<DataRow | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const revalidate = useRevalidate();
  // The open tab is part of the address (?view=derived), so a reload or a link keeps it.
  const [searchParams, setSearchParams] = useSearchParams();
  const view = searchParams.get('view') === 'derived' ? 'derived' : 'records';

  const facilities = useFacilities();
  const equipment = useEquipmentList();
  const instruments = useInstruments();
  const lists = { equipment, facility: facilities, instrument: instruments };
  const active = lists[kind];
  const entity = DATA_ENTITIES.find((candidate) => candidate.kind === kind)!;
  const columns = DATA_COLUMNS[kind];
  const visibleColumns = columns.filter((column) => !hidden.includes(column.key));

  const names = useMemo(() => ({
    facility: nameLookup(facilities.data, 'Facility'),
    equipment: nameLookup(equipment.data, 'Equipment'),
  }), [facilities.data, equipment.data]);
  const rows = useMemo(() => {
    const all = (active.data ?? []) as unknown as DataRow[];
    return sortRows(searchRows(all, columns, names, search), columns, names, sort);
  }, [active.data, columns, names, search, sort]);

  useEffect(() => {
    if (active.error) console.error('Failed to fetch data', active.error);
  }, [active.error]);

  const chooseEntity = (next: DataEntityKind) => {
    setKind(next);
    setSort(null);
    setSearch('');
    setHidden(loadHiddenColumns(next));
  };

  const toggleColumn = (key: string) => {
    const next = hidden.includes(key) ? hidden.filter((candidate) => candidate !== key) : [...hidden, key];
    setHidden(next);
    saveHiddenColumns(kind, next);
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    setDeleteBusy(true);
    try {
      await apiRequest('DELETE', `${entity.path}/${deleting.id}`);
      showToast({ title: `${entity.singular} deleted successfully`, intent: 'success' });
      setDeleting(null);
      await revalidate(entity.path, '/api/v1/unit-operation-types');
    } catch (cause) {
      console.error('Failed to delete', cause);
      const detail = cause instanceof Error && cause.message ? ` ${cause.message}` : '';
      showToast({ title: 'Error', message: `Failed to delete.${detail}`, intent: 'danger' });
    } finally {
      setDeleteBusy(false);
    }
  };

  const columnToggle = (
    <PopoverNext placement="bottom-end" content={(
      <div className="app-column-toggle" data-testid="column-toggle">
        <div className="app-column-toggle-title">Columns</div>
        {columns.map((column) => (
          <Checkbox key={column.key} label={column.label} checked={!hidden.includes(column.key)} onChange={() => toggleColumn(column.key)} />
        ))}
      </div>
    )}>
      <Button icon="column-layout" text="Columns" variant="outlined" />
    </PopoverNext>
  );

  return (
    <div className="app-page">
      <PageHeader
        title="Data Management"
        subtitle="Facilities, equipment and instruments of your organisation."
        actions={permissions.canCreate && view === 'records' ? <Button intent={Intent.PRIMARY} text={`+ Create ${entity.singular}`} onClick={() => setCreating(true)} /> : null}
      />
      <Tabs id="data-views" selectedTabId={view} onChange={(id) => setSearchParams(id === 'derived' ? { view: 'derived' } : {}, { replace: true })}
        className="app-data-views">
        <Tab id="records" title="Facilities, Equipment and Instruments" />
        <Tab id="derived" title="Derived Parameters" />
      </Tabs>
      {view === 'derived' ? <Card elevation={Elevation.ONE} className="app-section-card"><DerivedParametersPanel /></Card> : (
      <Card elevation={Elevation.ONE} className="app-section-card">
        <div className="app-data-toolbar">
          <HTMLSelect aria-label="Entity" value={kind} onChange={(event) => chooseEntity(event.target.value as DataEntityKind)}>
            {DATA_ENTITIES.map((option) => <option key={option.kind} value={option.kind}>{option.label}</option>)}
          </HTMLSelect>
          <InputGroup leftIcon="search" placeholder={`Search ${entity.label.toLowerCase()}...`} value={search} className="app-data-search"
            onChange={(event) => setSearch(event.target.value)} type="search" />
          <span className="bp6-text-muted app-data-count">{active.data ? `${rows.length} of ${active.data.length}` : ''}</span>
          {columnToggle}
        </div>
        {active.error ? <Callout intent={Intent.DANGER} icon="error" className="app-data-error">Failed to fetch data</Callout> : null}
        {active.isLoading ? <div className="app-table-empty"><Spinner size={28} /></div> : null}
        {active.data && rows.length === 0 ? (
          <NonIdealState icon="search" className="app-table-empty" title={search ? 'No matches' : `No ${entity.label.toLowerCase()} yet`}
            description={search ? 'Try another search.' : undefined} />
        ) : null}
        {active.data && rows.length > 0 ? (
          <div className="app-data-table-scroll">
            <HTMLTable striped interactive className="app-data-table" data-testid="data-table">
              <thead>
                <tr>
                  {visibleColumns.map((column) => (
                    <th key={column.key} className="app-sortable" onClick={() => setSort(nextSort(sort, column.key))}
                      aria-sort={sort?.key === column.key ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}>
                      {column.label}
                      <Icon className="app-sort-icon" size={12}
                        icon={sort?.key === column.key ? (sort.direction === 'asc' ? 'chevron-up' : 'chevron-down') : 'double-caret-vertical'} />
                    </th>
                  ))}
                  {permissions.canEdit ? <th className="app-actions-cell">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.id}>
                    {visibleColumns.map((column) => <td key={column.key}>{displayValue(row, column, names)}</td>)}
                    {permissions.canEdit ? (
                      <td className="app-actions-cell">
                        <ButtonGroup variant="minimal">
                          <AppTooltip content="Edit"><Button icon="edit" size="small" aria-label={`Edit ${String(row.name)}`} onClick={() => setEditing(row)} /></AppTooltip>
                          <AppTooltip content="Delete"><Button icon="trash" size="small" intent={Intent.DANGER} aria-label={`Delete ${String(row.name)}`} onClick={() => setDeleting(row)} /></AppTooltip>
                        </ButtonGroup>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </HTMLTable>
          </div>
        ) : null}
      </Card>
      )}
      <EntityFormDialog kind={kind} isOpen={creating} onClose={() => setCreating(false)}
        onSaved={() => showToast({ title: `${entity.singular} created successfully`, intent: 'success' })} />
      <EntityFormDialog kind={kind} isOpen={editing !== null} record={editing ?? undefined} onClose={() => setEditing(null)}
        onSaved={() => showToast({ title: `${entity.singular} updated successfully`, intent: 'success' })} />
      <ConfirmDialog isOpen={deleting !== null} title={`Delete ${entity.singular.toLowerCase()}`} destructive busy={deleteBusy} confirmLabel="Delete"
        onClose={() => setDeleting(null)} onConfirm={confirmDelete}
        description={deleting ? `Delete '${String(deleting.name)}'? This action cannot be undone.` : undefined} />
    </div>
  );
}
