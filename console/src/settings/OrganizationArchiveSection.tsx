/**
 * The whole-organisation archive in Settings (admins): one ZIP with every record as CSV, each unit
 * operation's readings as CSV long and a manifest of counts and checksums. It is built on the server as
 * an export job: a progress bar while it is written, then its Download (ExportJobProgress).
 */
import { Button, Callout, H5, Intent } from '@blueprintjs/core';
import { useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { requestExport } from '../exports/export-request.ts';
import { ExportJobProgress, useExportJob } from '../exports/ExportJobProgress.tsx';

export function OrganizationArchiveSection() {
  const { permissions } = useAuth();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const exportJob = useExportJob();
  if (!permissions.canManageUsers) return null;

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const outcome = await requestExport('/api/v1/exports/organization-archive', 'organization.zip', 'POST');
      if (outcome.kind === 'job') exportJob.follow(outcome.job);
    } catch (cause) {
      console.error('Organisation export failed', cause);
      setError(cause instanceof Error ? cause.message : 'The export failed.');
    } finally {
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
      <Button icon="archive" intent={Intent.PRIMARY} text="Prepare archive" loading={busy} disabled={exportJob.running} onClick={() => void start()} />
      {error ? <Callout intent={Intent.DANGER} title="Export failed">{error}</Callout> : null}
      <ExportJobProgress state={exportJob} />
    </section>
  );
}
