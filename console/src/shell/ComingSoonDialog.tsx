/** The modal behind a coming-soon sidebar entry (Integrations). */
import { InfoDialog } from '../components/dialogs/InfoDialog.tsx';
import type { IconName } from '@blueprintjs/core';

export interface ComingSoonDialogProps {
  title: string;
  description: string;
  icon: IconName;
  isOpen: boolean;
  onClose: () => void;
}

export function ComingSoonDialog({ title, description, icon, isOpen, onClose }: ComingSoonDialogProps) {
  return <InfoDialog title={title} subtitle="Coming Soon" description={description} icon={icon} isOpen={isOpen} onClose={onClose} />;
}
