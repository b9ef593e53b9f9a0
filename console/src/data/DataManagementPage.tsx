import { PageHeader } from '../components/PageHeader.tsx';

export function DataManagementPage() {
  return <PageHeader title="Data Management" />;
}
