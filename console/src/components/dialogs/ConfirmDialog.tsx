/** Asks before an action: Confirm and Cancel by default, red for destructive actions. */
import { Button, Dialog, DialogBody, DialogFooter, Intent, type IconName } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import { dialogStyle, type DialogSize } from './dialog-size.ts';

export interface ConfirmDialogProps {
  title: ReactNode;
  description?: ReactNode;
  isOpen: boolean;
  onClose: () => void;
  onConfirm: () => void | Promise<void>;
  confirmLabel?: string;
  cancelLabel?: string;
  busy?: boolean;
  destructive?: boolean;
  size?: DialogSize;
  icon?: IconName;
  children?: ReactNode;
}

export function ConfirmDialog({
  title, description, isOpen, onClose, onConfirm, confirmLabel = 'Confirm', cancelLabel = 'Cancel', busy = false,
  destructive = false, size = 'md', icon, children,
}: ConfirmDialogProps) {
  return (
    <Dialog isOpen={isOpen} onClose={busy ? undefined : onClose} title={title} icon={icon ?? (destructive ? 'warning-sign' : undefined)}
      style={dialogStyle(size)} className="app-dialog" canEscapeKeyClose={!busy} canOutsideClickClose={!busy}>
      <DialogBody className="app-dialog-body">
        {description ? <p className="app-dialog-description">{description}</p> : null}
        {children}
      </DialogBody>
      <DialogFooter actions={(
        <>
          <Button text={cancelLabel} onClick={onClose} disabled={busy} variant="minimal" />
          <Button intent={destructive ? Intent.DANGER : Intent.PRIMARY} disabled={busy} loading={busy}
            text={confirmLabel} onClick={() => void onConfirm()} />
        </>
      )} />
    </Dialog>
  );
}
