/** Edit and delete for a run, shared by the dashboard and the All runs page (one set of dialogs each). */
import { useState, type ReactNode } from 'react';
import { apiRequest } from '../api/client.ts';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { EntityFormDialog } from '../entities/EntityFormDialog.tsx';
import { useRevalidate } from '../entities/queries.ts';
import type { Run } from '../entities/types.ts';

export interface RunActions {
  create: () => void;
  edit: (run: Run) => void;
  remove: (run: Run) => void;
  dialogs: ReactNode;
}

export function useRunActions(onDeleted?: (run: Run) => void): RunActions {
  const [editing, setEditing] = useState<Run | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Run | null>(null);
  const [busy, setBusy] = useState(false);
  const revalidate = useRevalidate();

  const confirmDelete = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await apiRequest('DELETE', `/api/v1/runs/${deleting.id}`);
      showToast({ title: 'Run deleted successfully', message: `'${deleting.name}' was deleted.`, intent: 'success' });
      onDeleted?.(deleting);
      setDeleting(null);
      await revalidate('/api/v1/runs', '/api/v1/unit-operations');
    } catch (cause) {
      console.error('Failed to delete run', cause);
      showToast({ title: 'Failed to delete run', message: cause instanceof Error ? cause.message : 'Please try again.', intent: 'danger' });
    } finally {
      setBusy(false);
    }
  };

  const dialogs = (
    <>
      <EntityFormDialog kind="run" isOpen={creating} onClose={() => setCreating(false)}
        onSaved={() => showToast({ title: 'Run created successfully', intent: 'success' })} />
      <EntityFormDialog kind="run" isOpen={editing !== null} record={editing ?? undefined} onClose={() => setEditing(null)}
        onSaved={() => showToast({ title: 'Run updated successfully', intent: 'success' })} />
      <ConfirmDialog
        isOpen={deleting !== null}
        title="Delete run"
        destructive
        busy={busy}
        confirmLabel="Delete"
        onClose={() => setDeleting(null)}
        onConfirm={confirmDelete}
        description={deleting ? `Delete the run '${deleting.name}' with its unit operations and their time series? This action cannot be undone.` : undefined}
      />
    </>
  );

  return { create: () => setCreating(true), edit: setEditing, remove: setDeleting, dialogs };
}
