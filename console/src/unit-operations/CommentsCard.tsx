/**
 * The Comments card of the unit-operation detail: a search box, the comments sorted by
 * minute with author, dd-mm-yyyy hh:mm date and minute, and an Edit/Delete menu for editors.
 */
import { useMemo, useState } from 'react';
import { Button, Card, H4, InputGroup, Menu, MenuItem, NonIdealState, PopoverNext, Tag } from '@blueprintjs/core';
import { formatElapsed } from '../dates/elapsed-time.ts';
import { formatCommentDate, searchComments, sortByMinute, type CommentView } from './comments-model.ts';

export const COMMENTS_EMPTY_MESSAGE = 'No comments yet. Click on the chart to add a comment.';

export interface CommentsCardProps {
  comments: readonly CommentView[];
  canEdit: boolean;
  loading?: boolean;
  onEdit: (comment: CommentView) => void;
  onDelete: (comment: CommentView) => void;
}

export function CommentsCard({ comments, canEdit, loading, onEdit, onDelete }: CommentsCardProps) {
  const [query, setQuery] = useState('');
  const visible = useMemo(() => sortByMinute(searchComments(comments, query)), [comments, query]);

  return (
    <Card className="uo-card uo-comments" data-testid="comments-card">
      <div className="uo-card-header">
        <H4>Comments <Tag minimal round>{comments.length}</Tag></H4>
        <InputGroup leftIcon="search" placeholder="Search comments..." value={query} type="search" className="uo-comments-search"
          onChange={(event) => setQuery(event.target.value)} aria-label="Search comments" />
      </div>
      {loading ? (
        <p className="bp6-text-muted">Loading comments...</p>
      ) : comments.length === 0 ? (
        <NonIdealState icon="comment" description={COMMENTS_EMPTY_MESSAGE} className="uo-comments-empty" />
      ) : visible.length === 0 ? (
        <p className="bp6-text-muted">No comments match “{query}”.</p>
      ) : (
        <ul className="uo-comment-list">
          {visible.map((comment) => (
            <li key={comment.id} className="uo-comment" data-testid="comment-item">
              <Tag minimal intent="primary" className="uo-comment-minute">{formatElapsed(comment.minute)}</Tag>
              <div className="uo-comment-body">
                <div className="uo-comment-text">{comment.content}</div>
                <div className="uo-comment-meta bp6-text-muted">
                  {comment.author} · {formatCommentDate(comment.timestamp)}
                </div>
              </div>
              {canEdit && (
                <PopoverNext placement="bottom-end" content={(
                  <Menu>
                    <MenuItem icon="edit" text="Edit" onClick={() => onEdit(comment)} />
                    <MenuItem icon="trash" text="Delete" intent="danger" onClick={() => onDelete(comment)} />
                  </Menu>
                )}>
                  <Button variant="minimal" icon="more" aria-label="Comment actions" />
                </PopoverNext>
              )}
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
