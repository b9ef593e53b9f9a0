/** The names and content types of export files, the same whether streamed or written by an export job. */
import type { TimeSeriesExportFormat } from '@bioprocess/shared/exports';
import type { ExportScope } from './scope.ts';

export const CONTENT_TYPES: Record<TimeSeriesExportFormat, string> = {
  'csv-long': 'text/csv; charset=utf-8',
  'csv-wide': 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export const ZIP_CONTENT_TYPE = 'application/zip';

/** `unit-operation-12-20250303T080000-wide.csv`, `run-3-20250303T080000.xlsx`, `instrument-20250303T080000-long.csv`. */
export function timeSeriesFileName(scope: Pick<ExportScope, 'resourceType' | 'resourceId'>, format: TimeSeriesExportFormat, at: Date): string {
  const stamp = at.toISOString().slice(0, 19).replace(/[-:]/g, '');
  const name = `${scope.resourceType.replace('_', '-')}${scope.resourceId === null ? '' : `-${scope.resourceId}`}-${stamp}`;
  return format === 'xlsx' ? `${name}.xlsx` : `${name}-${format.slice(4)}.csv`;
}

export function archiveFileName(organizationId: number, at: Date): string {
  return `organization-${organizationId}-${at.toISOString().slice(0, 10)}.zip`;
}
