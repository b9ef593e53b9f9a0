/**
 * The reason-for-change dialog: asked before an edit or deletion of a record kind whose organisation
 * setting is "optional" or "required" (console/src/api/change-reason.ts decides when), with the
 * organisation's pick-list and free text. It opens above whatever form made the change, in a root of its
 * own, so every form gets it without wiring.
 */
import { Button, Dialog, DialogBody, DialogFooter, FormGroup, HTMLSelect, Intent, TextArea } from '@blueprintjs/core';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  CHANGE_REASON_KIND_LABELS, CHANGE_REASON_MAX_LENGTH, type ChangeReason, type ChangeReasonKind,
} from '@bioprocess/shared/change-reasons';
import { ChangeReasonCancelled, type ChangeReasonPrompt } from '../api/change-reason.ts';
import { dialogStyle } from './dialogs/dialog-size.ts';

export interface ChangeReasonDialogProps {
  kind: ChangeReasonKind;
  required: boolean;
  reasons: readonly string[];
  /** DELETE asks about a deletion, anything else about a change. */
  method: string;
  onSubmit: (reason: ChangeReason | null) => void;
  onCancel: () => void;
}

export function ChangeReasonDialog({ kind, required, reasons, method, onSubmit, onCancel }: ChangeReasonDialogProps) {
  const [isOpen, setOpen] = useState(true);
  const [code, setCode] = useState('');
  const [text, setText] = useState('');
  const given = code !== '' || text.trim() !== '';
  const what = CHANGE_REASON_KIND_LABELS[kind].toLowerCase();
  const verb = method === 'DELETE' ? 'deletion' : kind === 'time_series' && method === 'POST' ? 'upload' : 'change';
  const close = (then: () => void) => {
    setOpen(false);
    then();
  };
  const submit = () => {
    if (required && !given) return;
    close(() => onSubmit(given ? { text: text.trim() || null, code: code || null } : null));
  };

  return (
    <Dialog isOpen={isOpen} onClose={() => close(onCancel)} title="Reason for change" icon="annotation"
      style={dialogStyle('md')} className="app-dialog" data-testid="change-reason-dialog">
      <form onSubmit={(event) => { event.preventDefault(); submit(); }}>
        <DialogBody className="app-dialog-body">
          <p className="app-dialog-description">
            {required
              ? `Your organisation requires a reason for every ${verb} of ${what}. It is kept in the audit trail.`
              : `Your organisation asks for a reason for each ${verb} of ${what}. It is kept in the audit trail; you may leave it empty.`}
          </p>
          {reasons.length > 0 ? (
            <FormGroup label="Reason" labelFor="change-reason-code">
              <HTMLSelect id="change-reason-code" fill value={code} onChange={(event) => setCode(event.target.value)}>
                <option value="">{required ? 'Choose a reason, or describe it below' : 'No reason chosen'}</option>
                {reasons.map((reason) => <option key={reason} value={reason}>{reason}</option>)}
              </HTMLSelect>
            </FormGroup>
          ) : null}
          <FormGroup label={reasons.length > 0 ? 'Details' : 'Reason'} labelFor="change-reason-text"
            helperText={required && !given ? 'A reason is required: choose one or write it.' : undefined}>
            <TextArea id="change-reason-text" fill autoFocus rows={3} maxLength={CHANGE_REASON_MAX_LENGTH} value={text}
              onChange={(event) => setText(event.target.value)} />
          </FormGroup>
        </DialogBody>
        <DialogFooter actions={(
          <>
            <Button text="Cancel" onClick={() => close(onCancel)} variant="minimal" />
            <Button type="submit" intent={Intent.PRIMARY} text={verb === 'deletion' ? 'Delete' : 'Continue'} disabled={required && !given} />
          </>
        )} />
      </form>
    </Dialog>
  );
}

/** Opens the dialog in a root of its own; resolves with the reason or rejects with ChangeReasonCancelled. */
export const askForChangeReason: ChangeReasonPrompt = ({ kind, required, reasons, method }) => new Promise((resolve, reject) => {
  const container = document.createElement('div');
  document.body.appendChild(container);
  const root = createRoot(container);
  // Unmounted after Blueprint's closing transition.
  const finish = () => setTimeout(() => {
    root.unmount();
    container.remove();
  }, 300);
  root.render(
    <ChangeReasonDialog kind={kind} required={required} reasons={reasons} method={method}
      onSubmit={(reason) => { finish(); resolve(reason); }}
      onCancel={() => { finish(); reject(new ChangeReasonCancelled()); }} />,
  );
});
