/**
 * The Derived parameters tab of Data management: the organisation's formulas (the built-in library's
 * copies included), created, edited (each edit a new version) and deleted by editors and admins.
 */
import { Button, ButtonGroup, Callout, Code, HTMLTable, Intent, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { DerivedParameterDialog } from './DerivedParameterDialog.tsx';
import { derivedParameterListSchema, type DerivedParameterView } from './derived-model.ts';
import './derived.css';

export const DERIVED_PARAMETERS_PATH = '/api/v1/derived-parameters';

export function DerivedParametersPanel() {
  const { permissions } = useAuth();
  const list = useApi<DerivedParameterView[]>(DERIVED_PARAMETERS_PATH, derivedParameterListSchema);
  const [editing, setEditing] = useState<DerivedParameterView | 'new' | null>(null);
  const [deleting, setDeleting] = useState<DerivedParameterView | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);

  const confirmDelete = async () => {
    if (!deleting) return;
    setDeleteBusy(true);
    try {
      await apiRequest('DELETE', `${DERIVED_PARAMETERS_PATH}/${deleting.id}`);
      showToast({ title: 'Derived parameter deleted', intent: 'success' });
      setDeleting(null);
      await list.mutate();
    } catch (error) {
      showToast({ title: 'Error', message: `Failed to delete.${error instanceof Error ? ` ${error.message}` : ''}`, intent: 'danger' });
    } finally {
      setDeleteBusy(false);
    }
  };

  return (
    <div data-testid="derived-parameters">
      <div className="derived-toolbar">
        <span className="bp6-text-muted">Formulas over the instruments of a unit operation's equipment, drawn dashed beside its readings.</span>
        {permissions.canCreate ? <Button intent={Intent.PRIMARY} icon="add" text="Create derived parameter" onClick={() => setEditing('new')} /> : null}
      </div>
      {list.error ? <Callout intent={Intent.DANGER} icon="error">Failed to fetch derived parameters</Callout> : null}
      {list.isLoading ? <div className="app-table-empty"><Spinner size={28} /></div> : null}
      {list.data && list.data.length === 0 ? <NonIdealState icon="function" title="No derived parameters yet" /> : null}
      {list.data && list.data.length > 0 ? (
        <div className="app-data-table-scroll">
          <HTMLTable striped className="app-data-table derived-table" data-testid="derived-table">
            <thead>
              <tr><th>Name</th><th>Unit</th><th>Formula</th><th>Version</th><th>Description</th>{permissions.canEdit ? <th className="app-actions-cell">Actions</th> : null}</tr>
            </thead>
            <tbody>
              {list.data.map((row) => (
                <tr key={row.id}>
                  <td>{row.name}{row.libraryKey ? <Tag minimal className="derived-library-tag">library</Tag> : null}</td>
                  <td>{row.unit ?? ''}</td>
                  <td className="derived-formula-cell"><AppTooltip content={row.expression}><Code>{row.expression}</Code></AppTooltip></td>
                  <td>{row.version}</td>
                  <td>{row.description ?? ''}</td>
                  {permissions.canEdit ? (
                    <td className="app-actions-cell">
                      <ButtonGroup variant="minimal">
                        <AppTooltip content="Edit"><Button icon="edit" size="small" aria-label={`Edit ${row.name}`} onClick={() => setEditing(row)} /></AppTooltip>
                        <AppTooltip content="Delete"><Button icon="trash" size="small" intent={Intent.DANGER} aria-label={`Delete ${row.name}`} onClick={() => setDeleting(row)} /></AppTooltip>
                      </ButtonGroup>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        </div>
      ) : null}
      <DerivedParameterDialog isOpen={editing !== null} record={editing === 'new' || editing === null ? undefined : editing}
        onClose={() => setEditing(null)} onSaved={() => void list.mutate()} />
      <ConfirmDialog isOpen={deleting !== null} title="Delete derived parameter" destructive busy={deleteBusy} confirmLabel="Delete"
        onClose={() => setDeleting(null)} onConfirm={confirmDelete}
        description={deleting ? `Delete '${deleting.name}' and its versions? This action cannot be undone.` : undefined} />
    </div>
  );
}
