/**
 * Acknowledging a firing: a required comment, sent once. Where the organisation requires acknowledgements
 * to be signed, the dialog is a signing dialog like a run's: the password is asked every time and the
 * acknowledgement is recorded with the acknowledger's signature. The server's message shows in the
 * dialog when it refuses.
 */
import { useState } from 'react';
import { Callout, FormGroup, InputGroup, Intent, TextArea } from '@blueprintjs/core';
import { apiRequest, ApiError } from '../api/client.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { ALERT_EVENTS_PATH, useAlertAcknowledgementSettings, type AlertEventView } from './alert-queries.ts';

export function AcknowledgeAlertDialog({ event, onClose, onDone }: { event: AlertEventView | null; onClose: () => void; onDone: () => void }) {
  const settings = useAlertAcknowledgementSettings();
  const [comment, setComment] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const signs = settings.data?.requiresSignature === true;
  const close = () => {
    setComment('');
    setPassword('');
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
      await apiRequest('POST', `${ALERT_EVENTS_PATH}/${event.id}/acknowledge`, { comment: comment.trim(), ...(signs ? { password } : {}) });
      setComment('');
      setPassword('');
      onDone();
    } catch (failure) {
      setError(failure instanceof ApiError || failure instanceof Error ? failure.message : 'The alert could not be acknowledged.');
      setPassword('');
      // An admin may have turned the rule on since the dialog read it: read it again, so the password field shows.
      void settings.mutate();
    } finally {
      setBusy(false);
    }
  };
  return (
    <FormDialog isOpen={event !== null} onClose={close} onSubmit={submit} busy={busy} size="sm"
      title={signs ? 'Acknowledge and sign alert' : 'Acknowledge alert'} icon={signs ? 'draw' : 'notifications'}
      submitLabel={signs ? 'Acknowledge and sign' : 'Acknowledge'} submitDisabled={signs && password === ''}
      description={event ? <><strong>{event.ruleName}</strong>: {event.message}</> : null}>
      <FormGroup label="Comment" labelFor="alert-acknowledgement" helperText="What was seen or done; kept with the alert and in the audit log.">
        <TextArea id="alert-acknowledgement" fill autoFocus value={comment} maxLength={2000} onChange={(change) => setComment(change.target.value)} />
      </FormGroup>
      {settings.error ? (
        <Callout intent={Intent.WARNING}>Whether acknowledgements must be signed could not be read: {settings.error.message}</Callout>
      ) : null}
      {signs ? (
        <>
          <p className="bp6-text-muted">
            Your organisation requires acknowledgements to be signed: your signature (meaning Reviewed) binds this acknowledgement of the alert.
          </p>
          <FormGroup label="Password" labelFor="signature-password" helperText="Enter your password again to sign.">
            <InputGroup id="signature-password" type="password" autoComplete="current-password" value={password}
              onChange={(change) => setPassword(change.currentTarget.value)} />
          </FormGroup>
        </>
      ) : null}
      {error ? <Callout intent={Intent.DANGER}>{error}</Callout> : null}
    </FormDialog>
  );
}
