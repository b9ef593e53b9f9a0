/** Acknowledging a firing: a required comment, sent once; the server's message shows in the dialog when it refuses. */
import { useState } from 'react';
import { Button, Callout, Dialog, DialogBody, DialogFooter, FormGroup, TextArea } from '@blueprintjs/core';
import { apiRequest, ApiError } from '../api/client.ts';
import { ALERT_EVENTS_PATH, type AlertEventView } from './alert-queries.ts';

export function AcknowledgeAlertDialog({ event, onClose, onDone }: { event: AlertEventView | null; onClose: () => void; onDone: () => void }) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const close = () => {
    setComment('');
    setError(null);
    onClose();
  };
  const submit = async () => {
    if (!event) return;
    if (!comment.trim()) {
      setError('A comment is required to acknowledge an alert.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await apiRequest('POST', `${ALERT_EVENTS_PATH}/${event.id}/acknowledge`, { comment: comment.trim() });
      setComment('');
      onDone();
    } catch (failure) {
      setError(failure instanceof ApiError || failure instanceof Error ? failure.message : 'The alert could not be acknowledged.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog isOpen={event !== null} onClose={close} title="Acknowledge alert" icon="notifications">
      <DialogBody>
        {event ? <p><strong>{event.ruleName}</strong>: {event.message}</p> : null}
        <FormGroup label="Comment" labelFor="alert-acknowledgement" helperText="What was seen or done; kept with the alert and in the audit log.">
          <TextArea id="alert-acknowledgement" fill autoFocus value={comment} maxLength={2000} onChange={(change) => setComment(change.target.value)} />
        </FormGroup>
        {error ? <Callout intent="danger">{error}</Callout> : null}
      </DialogBody>
      <DialogFooter actions={(
        <>
          <Button text="Cancel" onClick={close} disabled={busy} />
          <Button intent="primary" text="Acknowledge" loading={busy} onClick={() => void submit()} />
        </>
      )} />
    </Dialog>
  );
}
