/**
 * The whole-organisation archive in Settings (admins): one ZIP with every record as CSV, each unit
 * operation's readings as CSV long and a manifest of counts and checksums. It is built on the server as
 * an export job; the section lists the recent archives (RecentExportJobs), so one being written shows
 * its progress bar, and a finished one its Download, after a reload too.
 */
import { Button, Callout, H5, Intent } from '@blueprintjs/core';
import { useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { requestExport } from '../exports/export-request.ts';
import { RecentExportJobList, useRecentExportJobs } from '../exports/RecentExportJobs.tsx';

/** Archives listed: the newest few (older files expire anyway). */
const ARCHIVES_SHOWN = 3;

export function OrganizationArchiveSection() {
  const { permissions } = useAuth();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const recent = useRecentExportJobs({ kind: 'organization_archive', limit: ARCHIVES_SHOWN, enabled: permissions.canManageUsers });
  if (!permissions.canManageUsers) return null;

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await requestExport('/api/v1/exports/organization-archive', 'organization.zip', 'POST');
    } catch (cause) {
      console.error('Organisation export failed', cause);
      setError(cause instanceof Error ? cause.message : 'The export failed.');
    } finally {
      await recent.refresh();
      setBusy(false);
    }
  };

  return (
    <section className="app-settings-section" data-testid="organization-archive">
      <H5>Organisation export</H5>
      <p className="bp6-text-muted">
        Everything of your organisation in one ZIP file: runs, unit operations, facilities, equipment, instruments and
        comments as CSV, every unit operation&apos;s readings as CSV, and a manifest with counts and checksums. The archive is
        prepared on the server; download it here when it is ready.
      </p>
      <Button icon="archive" intent={Intent.PRIMARY} text="Prepare archive" loading={busy} disabled={recent.running} onClick={() => void start()} />
      {error ? <Callout intent={Intent.DANGER} title="Export failed">{error}</Callout> : null}
      <RecentExportJobList recent={recent} title="Recent archives" />
    </section>
  );
}
