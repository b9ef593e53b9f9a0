/**
 * The whole-organisation archive in Settings (admins): one ZIP with every record as CSV, each unit
 * operation's readings as CSV long and a manifest of counts and checksums, downloaded by the browser.
 */
import { Button, H5, Intent } from '@blueprintjs/core';
import { useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { showToast } from '../components/toaster.ts';
import { downloadExport } from '../exports/export-request.ts';

export function OrganizationArchiveSection() {
  const { permissions } = useAuth();
  const [busy, setBusy] = useState(false);
  if (!permissions.canManageUsers) return null;

  const download = async () => {
    setBusy(true);
    try {
      await downloadExport('/api/v1/exports/organization-archive', 'organization.zip');
      showToast({ title: 'Export successful', intent: 'success' });
    } catch (cause) {
      console.error('Organisation export failed', cause);
      showToast({ title: 'Export failed', message: cause instanceof Error ? cause.message : undefined, intent: 'danger' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="app-settings-section" data-testid="organization-archive">
      <H5>Organisation export</H5>
      <p className="bp6-text-muted">
        Everything of your organisation in one ZIP file: runs, unit operations, facilities, equipment, instruments and
        comments as CSV, every unit operation&apos;s readings as CSV, and a manifest with counts and checksums.
      </p>
      <Button icon="archive" intent={Intent.PRIMARY} text="Download archive" loading={busy} onClick={() => void download()} />
    </section>
  );
}
