/** The Delete Comment confirmation: the minute, the comment and its author, and the warning. */
import { useState } from 'react';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { formatElapsed } from '../dates/elapsed-time.ts';
import type { CommentView } from './comments-model.ts';

export interface DeleteCommentDialogProps {
  comment: CommentView | null;
  onClose: () => void;
  onConfirm: (comment: CommentView) => Promise<void>;
}

export function DeleteCommentDialog({ comment, onClose, onConfirm }: DeleteCommentDialogProps) {
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    if (!comment) return;
    setBusy(true);
    try {
      await onConfirm(comment);
    } catch {
      // Failure toast shown by the caller; the confirmation stays open.
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog title="Delete Comment" isOpen={comment !== null} onClose={onClose} onConfirm={confirm} busy={busy}
      destructive confirmLabel="Delete" size="sm">
      {comment && (
        <div className="uo-delete-comment">
          <p>Delete the comment at <strong>{formatElapsed(comment.minute)}</strong>?</p>
          <blockquote className="bp6-blockquote">{comment.content}</blockquote>
          <p className="bp6-text-muted">By {comment.author}</p>
          <p><strong>This action cannot be undone.</strong></p>
        </div>
      )}
    </ConfirmDialog>
  );
}
