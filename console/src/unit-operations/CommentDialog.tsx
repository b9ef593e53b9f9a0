/**
 * Create/Edit Comment dialog: a required Comment textarea, a Timestamp (datetime-local)
 * and, after 'or', Minutes since the operation's start; the two time fields stay in sync. On failure
 * the dialog stays open (the caller shows the toast).
 */
import { useEffect, useState } from 'react';
import { FormGroup, InputGroup, TextArea } from '@blueprintjs/core';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import {
  commentContentError, fieldsFromMinute, fieldsFromMinutesInput, fieldsFromTimestampInput, isoFromFields, type CommentTimeFields,
} from './comments-model.ts';
import { DATE_RANGE_MESSAGES } from '@bioprocess/shared/date-range';
import { DateTimeField } from '../dates/DateTimeField.tsx';

export interface CommentDialogProps {
  mode: 'create' | 'edit';
  isOpen: boolean;
  startMs: number;
  initialMinute: number;
  initialContent?: string;
  onClose: () => void;
  /** Resolves when saved; rejects to keep the dialog open. */
  onSubmit: (values: { content: string; timestamp: string }) => Promise<void>;
}

export function CommentDialog({ mode, isOpen, startMs, initialMinute, initialContent = '', onClose, onSubmit }: CommentDialogProps) {
  const [content, setContent] = useState(initialContent);
  const [time, setTime] = useState<CommentTimeFields>(() => fieldsFromMinute(initialMinute, startMs));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!isOpen) return;
    setContent(initialContent);
    setTime(fieldsFromMinute(initialMinute, startMs));
    setError(null);
  }, [isOpen, initialContent, initialMinute, startMs]);

  const submit = async () => {
    const contentError = commentContentError(content);
    if (contentError) {
      // Save does nothing with an empty comment; the field says why.
      setError(contentError);
      return;
    }
    const timestamp = isoFromFields(time, startMs);
    if (!timestamp) {
      setError(DATE_RANGE_MESSAGES.invalidFormat);
      return;
    }
    setBusy(true);
    try {
      await onSubmit({ content: content.trim(), timestamp });
    } catch {
      // The caller has shown the failure toast; the dialog stays open with the text intact.
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormDialog title={mode === 'create' ? 'Create Comment' : 'Edit Comment'} icon="comment" isOpen={isOpen} onClose={onClose}
      onSubmit={submit} submitLabel={mode === 'create' ? 'Create' : 'Save'} busy={busy} size="md">
      <FormGroup label="Comment" labelFor="comment-content" labelInfo="(required)" intent={error ? 'danger' : 'none'}
        helperText={error ?? undefined}>
        <TextArea id="comment-content" fill autoFocus rows={4} value={content} intent={error ? 'danger' : 'none'}
          onChange={(event) => { setContent(event.target.value); setError(null); }} placeholder="What happened at this point?" />
      </FormGroup>
      <div className="uo-comment-time-row">
        <FormGroup label="Timestamp" labelFor="comment-timestamp" className="uo-comment-time-field">
          <DateTimeField id="comment-timestamp" seconds={false} value={time.timestamp}
            onChange={(timestamp) => setTime(fieldsFromTimestampInput(timestamp, startMs))} />
        </FormGroup>
        <span className="uo-comment-time-or">or</span>
        <FormGroup label="Minutes" labelFor="comment-minutes" className="uo-comment-time-field">
          <InputGroup id="comment-minutes" inputMode="decimal" value={time.minutes}
            onChange={(event) => setTime(fieldsFromMinutesInput(event.target.value, startMs))} />
        </FormGroup>
      </div>
    </FormDialog>
  );
}
