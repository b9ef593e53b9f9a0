import { PageHeader } from '../components/PageHeader.tsx';

export function SettingsPage() {
  return <PageHeader title="Settings" />;
}
