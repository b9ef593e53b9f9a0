/** A dialog around a form: title, description, Cancel and a submit button (Save by default). */
import { Button, Dialog, DialogBody, DialogFooter, Intent, type IconName } from '@blueprintjs/core';
import type { FormEvent, ReactNode } from 'react';
import { dialogStyle, type DialogSize } from './dialog-size.ts';

export interface FormDialogProps {
  title: ReactNode;
  description?: ReactNode;
  isOpen: boolean;
  onClose: () => void;
  onSubmit: () => void | Promise<void>;
  submitLabel?: string;
  cancelLabel?: string;
  busy?: boolean;
  /** Red submit button for deletions and other irreversible changes. */
  destructive?: boolean;
  submitDisabled?: boolean;
  size?: DialogSize;
  icon?: IconName;
  /**
   * Open without Blueprint's zoom (a fade only): its 300 ms scale from half size, with overshoot, moves
   * every control under the pointer, so a choice clicked right after opening lands beside its target
   * and is lost (longer on a busy machine, where the animation's frames come late). For dialogs whose
   * first action is a click on a choice.
   */
  steady?: boolean;
  children?: ReactNode;
}

export function FormDialog({
  title, description, isOpen, onClose, onSubmit, submitLabel = 'Save', cancelLabel = 'Cancel', busy = false,
  destructive = false, submitDisabled = false, size = 'lg', icon, steady = false, children,
}: FormDialogProps) {
  const handleSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy || submitDisabled) return;
    void onSubmit();
  };
  return (
    <Dialog isOpen={isOpen} onClose={busy ? undefined : onClose} title={title} icon={icon} style={dialogStyle(size)}
      className="app-dialog" canEscapeKeyClose={!busy} canOutsideClickClose={!busy} transitionName={steady ? 'app-dialog-steady' : undefined} transitionDuration={steady ? 100 : undefined}>
      <form onSubmit={handleSubmit} className="app-dialog-form" noValidate>
        <DialogBody className="app-dialog-body">
          {description ? <p className="app-dialog-description">{description}</p> : null}
          {children}
        </DialogBody>
        <DialogFooter actions={(
          <>
            <Button text={cancelLabel} onClick={onClose} disabled={busy} variant="minimal" />
            <Button type="submit" intent={destructive ? Intent.DANGER : Intent.PRIMARY} disabled={busy || submitDisabled}
              text={busy ? 'Loading...' : submitLabel} />
          </>
        )} />
      </form>
    </Dialog>
  );
}
