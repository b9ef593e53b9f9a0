/** Information only: an icon, a title, a subtitle, the text and a Close button. */
import { Button, Dialog, DialogBody, DialogFooter, Icon, Intent, type IconName } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import { dialogStyle, type DialogSize } from './dialog-size.ts';

export interface InfoDialogProps {
  title: ReactNode;
  subtitle?: ReactNode;
  description?: ReactNode;
  icon?: IconName;
  isOpen: boolean;
  onClose: () => void;
  closeLabel?: string;
  size?: DialogSize;
  children?: ReactNode;
}

export function InfoDialog({ title, subtitle, description, icon = 'info-sign', isOpen, onClose, closeLabel = 'Close', size = 'md', children }: InfoDialogProps) {
  return (
    <Dialog isOpen={isOpen} onClose={onClose} title={title} style={dialogStyle(size)} className="app-dialog">
      <DialogBody className="app-dialog-body">
        <div className="app-info-dialog">
          <span className="app-info-dialog-icon"><Icon icon={icon} size={28} intent={Intent.PRIMARY} /></span>
          <div>
            {subtitle ? <div className="app-info-dialog-subtitle">{subtitle}</div> : null}
            {description ? <p className="app-info-dialog-description">{description}</p> : null}
            {children}
          </div>
        </div>
      </DialogBody>
      <DialogFooter actions={<Button intent={Intent.PRIMARY} text={closeLabel} onClick={onClose} />} />
    </Dialog>
  );
}
