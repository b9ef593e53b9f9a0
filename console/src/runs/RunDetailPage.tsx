import { PageHeader } from '../components/PageHeader.tsx';

export function RunDetailPage() {
  return <PageHeader title="Run Detail" />;
}
