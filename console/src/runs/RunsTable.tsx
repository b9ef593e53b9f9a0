/**
 * The runs table of the dashboard and the All runs page. Rows are virtualised (only the visible ones
 * are in the DOM), so 10,000 runs scroll as smoothly as ten. A row click opens the run; editors get
 * edit and delete actions at the end of each row.
 */
import { Button, ButtonGroup, Classes, HTMLTable, Icon, NonIdealState } from '@blueprintjs/core';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { StatusPill } from '../components/StatusPill.tsx';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { formatDate } from '../entities/format.ts';
import { statusOf } from '../entities/run-metrics.ts';
import type { Run } from '../entities/types.ts';
import './runs.css';

const ROW_HEIGHT = 41;

type SortKey = 'name' | 'strain' | 'target' | 'facility' | 'startTime' | 'endTime' | 'scaleLiters' | 'status';

interface Column {
  key: SortKey;
  label: string;
  width?: string;
}

const COLUMNS: readonly Column[] = [
  { key: 'name', label: 'Name', width: '24%' },
  { key: 'strain', label: 'Strain', width: '14%' },
  { key: 'target', label: 'Target', width: '10%' },
  { key: 'facility', label: 'Facility', width: '16%' },
  { key: 'startTime', label: 'Start Time', width: '136px' },
  { key: 'endTime', label: 'End Time', width: '136px' },
  { key: 'scaleLiters', label: 'Scale (L)', width: '84px' },
  { key: 'status', label: 'Status', width: '112px' },
];

export interface RunsTableProps {
  runs: readonly Run[];
  facilityName: (id: number | null | undefined) => string;
  /** Height of the scrolling area; the header stays visible. */
  maxHeight?: number;
  canEdit: boolean;
  onEdit: (run: Run) => void;
  onDelete: (run: Run) => void;
  emptyTitle?: string;
  emptyDescription?: string;
  /** Column sorting (the dashboard shows a fixed "most recent first" list instead). */
  sortable?: boolean;
}

function sortValue(run: Run, key: SortKey, facilityName: (id: number | null | undefined) => string): string | number {
  switch (key) {
    case 'facility': return facilityName(run.facilityId).toLowerCase();
    case 'status': return statusOf(run);
    case 'scaleLiters': return run.scaleLiters ?? -Infinity;
    case 'startTime':
    case 'endTime': return run[key] ? Date.parse(run[key]!) : -Infinity;
    default: return (run[key] ?? '').toLowerCase();
  }
}

export function RunsTable({
  runs, facilityName, maxHeight = 560, canEdit, onEdit, onDelete, emptyTitle = 'No runs found', emptyDescription, sortable = true,
}: RunsTableProps) {
  const navigate = useNavigate();
  const scrollRef = useRef<HTMLDivElement>(null);
  const [sort, setSort] = useState<{ key: SortKey; direction: 1 | -1 } | null>(null);

  const rows = useMemo(() => {
    if (!sort) return runs;
    return [...runs].sort((a, b) => {
      const left = sortValue(a, sort.key, facilityName);
      const right = sortValue(b, sort.key, facilityName);
      return (left < right ? -1 : left > right ? 1 : 0) * sort.direction;
    });
  }, [runs, sort, facilityName]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const paddingTop = items.length > 0 ? items[0]!.start : 0;
  const paddingBottom = items.length > 0 ? virtualizer.getTotalSize() - items[items.length - 1]!.end : 0;
  const columnCount = COLUMNS.length + (canEdit ? 1 : 0);

  const toggleSort = (key: SortKey) => {
    if (!sortable) return;
    setSort((current) => (current?.key === key ? (current.direction === 1 ? { key, direction: -1 } : null) : { key, direction: 1 }));
  };
  const open = (run: Run) => navigate(`/runs/${run.id}`);
  const stop = (event: MouseEvent) => event.stopPropagation();

  if (runs.length === 0) {
    return <NonIdealState icon="search" title={emptyTitle} description={emptyDescription} className="app-table-empty" />;
  }

  return (
    <div className="app-runs-table-scroll" ref={scrollRef} style={{ maxHeight }} data-testid="runs-table">
      <HTMLTable interactive striped className="app-runs-table">
        <colgroup>
          {COLUMNS.map((column) => <col key={column.key} style={column.width ? { width: column.width } : undefined} />)}
          {canEdit ? <col style={{ width: '84px' }} /> : null}
        </colgroup>
        <thead>
          <tr>
            {COLUMNS.map((column) => (
              <th key={column.key} onClick={() => toggleSort(column.key)} className={sortable ? 'app-sortable' : undefined}
                aria-sort={sort?.key === column.key ? (sort.direction === 1 ? 'ascending' : 'descending') : undefined}>
                {column.label}
                {sort?.key === column.key ? <Icon icon={sort.direction === 1 ? 'chevron-up' : 'chevron-down'} size={12} className="app-sort-icon" /> : null}
              </th>
            ))}
            {canEdit ? <th className="app-actions-cell">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {paddingTop > 0 ? <tr aria-hidden className="app-virtual-spacer"><td colSpan={columnCount} style={{ height: paddingTop }} /></tr> : null}
          {items.map((item) => {
            const run = rows[item.index]!;
            return (
              <tr key={run.id} data-index={item.index} className="app-run-row" tabIndex={0} onClick={() => open(run)}
                onKeyDown={(event: KeyboardEvent) => { if (event.key === 'Enter') open(run); }} style={{ height: ROW_HEIGHT }}>
                <td className="app-cell-strong app-cell-ellipsis" title={run.name}>{run.name}</td>
                <td className="app-cell-ellipsis" title={run.strain ?? undefined}>{run.strain ?? '-'}</td>
                <td className="app-cell-ellipsis" title={run.target ?? undefined}>{run.target ?? '-'}</td>
                <td className="app-cell-ellipsis" title={facilityName(run.facilityId)}>{facilityName(run.facilityId)}</td>
                <td className={Classes.TEXT_MUTED}>{formatDate(run.startTime)}</td>
                <td className={Classes.TEXT_MUTED}>{formatDate(run.endTime)}</td>
                <td>{run.scaleLiters ?? '-'}</td>
                <td><StatusPill status={statusOf(run)} /></td>
                {canEdit ? (
                  <td className="app-actions-cell" onClick={stop}>
                    <ButtonGroup variant="minimal">
                      <AppTooltip content="Edit run"><Button icon="edit" size="small" aria-label={`Edit ${run.name}`} onClick={() => onEdit(run)} /></AppTooltip>
                      <AppTooltip content="Delete run"><Button icon="trash" size="small" intent="danger" aria-label={`Delete ${run.name}`} onClick={() => onDelete(run)} /></AppTooltip>
                    </ButtonGroup>
                  </td>
                ) : null}
              </tr>
            );
          })}
          {paddingBottom > 0 ? <tr aria-hidden className="app-virtual-spacer"><td colSpan={columnCount} style={{ height: paddingBottom }} /></tr> : null}
        </tbody>
      </HTMLTable>
    </div>
  );
}
