/**
 * The review panel of a run page: the review state, the actions the caller may take (Sign with a
 * meaning, Submit for review, Approve, Release, Reopen with a reason), each signature with the signer's
 * printed name, meaning, date and time with zone and its validity now, and the review report.
 */
import { Button, ButtonGroup, Callout, Card, Elevation, FormGroup, H4, HTMLSelect, HTMLTable, InputGroup, Intent, Spinner, Tag, TextArea } from '@blueprintjs/core';
import { useState } from 'react';
import type { ReviewState } from '@bioprocess/shared/run-review';
import { useAuth } from '../auth/useAuth.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { formatDate } from '../dates/date-time-format.ts';
import { useRevalidate } from '../entities/queries.ts';
import { ReviewReportDialog } from './ReviewReportDialog.tsx';
import './run-review.css';
import { moveRunReview, runReviewKey, signRun, useRunReview, type SignatureView } from './run-review-queries.ts';

const STATE_INTENTS: Record<ReviewState, Intent> = {
  draft: Intent.NONE, in_review: Intent.WARNING, approved: Intent.SUCCESS, released: Intent.PRIMARY,
};

export function SignatureValidityTag({ signature }: { signature: SignatureView }) {
  if (signature.validity === 'valid') return <Tag intent={Intent.SUCCESS} minimal icon="tick">Valid</Tag>;
  if (signature.validity === 'revoked') return <Tag intent={Intent.DANGER} minimal icon="disable">Revoked</Tag>;
  return <Tag intent={Intent.WARNING} minimal icon="warning-sign">No longer valid: the run changed</Tag>;
}

type Signing = { kind: 'sign' } | { kind: 'approve' } | { kind: 'release' };

export function RunReviewPanel({ runId }: { runId: number }) {
  const { permissions } = useAuth();
  const review = useRunReview(runId);
  const revalidate = useRevalidate();
  const [signing, setSigning] = useState<Signing | null>(null);
  const [meaning, setMeaning] = useState('authored');
  const [password, setPassword] = useState('');
  const [reopening, setReopening] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [reportOpen, setReportOpen] = useState(false);

  if (review.error) return <Callout intent={Intent.DANGER} className="app-page-callout">Failed to load the review of this run.</Callout>;
  if (!review.data) return <Card elevation={Elevation.ONE} className="app-review-card"><Spinner size={24} /></Card>;
  const current = review.data;
  const isApprover = permissions.canManageUsers;

  const act = async (work: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      showToast({ title: done, intent: 'success' });
      setSigning(null);
      setReopening(false);
      setPassword('');
      setReason('');
      await revalidate(runReviewKey(runId), `/api/v1/runs/${runId}/review-report`);
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setBusy(false);
    }
  };

  const submitSigning = () => {
    if (!signing) return;
    const secret = password || undefined;
    if (signing.kind === 'sign') return act(() => signRun(runId, meaning, secret), 'Signed');
    if (signing.kind === 'approve') return act(() => moveRunReview(runId, 'approve', { password: secret }), 'Run approved');
    return act(() => moveRunReview(runId, 'release', { password: secret }), 'Run released');
  };
  const signingTitle = signing?.kind === 'approve' ? 'Approve run' : signing?.kind === 'release' ? 'Release run' : 'Sign run';

  return (
    <Card elevation={Elevation.ONE} className="app-review-card" data-testid="run-review-panel">
      <div className="app-review-head">
        <H4>Review</H4>
        <Tag large intent={STATE_INTENTS[current.state]} data-testid="review-state">{current.stateLabel}</Tag>
      </div>
      {current.changedAt ? (
        <p className="app-review-meta">Since {formatDate(current.changedAt)}{current.changedByName ? `, by ${current.changedByName}` : ''}</p>
      ) : null}
      <ButtonGroup className="app-review-actions">
        {permissions.canEdit ? <Button icon="draw" text="Sign" onClick={() => { setError(null); setSigning({ kind: 'sign' }); }} /> : null}
        {permissions.canEdit && current.state === 'draft' ? (
          <Button icon="send-message" intent={Intent.PRIMARY} text="Submit for review" loading={busy && !signing && !reopening}
            onClick={() => act(() => moveRunReview(runId, 'submit'), 'Submitted for review')} />
        ) : null}
        {isApprover && current.state === 'in_review' ? (
          <Button icon="endorsed" intent={Intent.SUCCESS} text="Approve" onClick={() => { setError(null); setSigning({ kind: 'approve' }); }} />
        ) : null}
        {isApprover && current.state === 'approved' ? (
          <Button icon="unlock" intent={Intent.PRIMARY} text="Release" onClick={() => { setError(null); setSigning({ kind: 'release' }); }} />
        ) : null}
        {(current.state === 'in_review' && permissions.canEdit) || (current.state !== 'draft' && current.state !== 'in_review' && isApprover) ? (
          <Button icon="undo" text="Reopen" onClick={() => { setError(null); setReopening(true); }} />
        ) : null}
        <Button icon="document" text="Review report" onClick={() => setReportOpen(true)} />
      </ButtonGroup>
      {error && !signing && !reopening ? <Callout intent={Intent.DANGER} className="app-review-error">{error}</Callout> : null}

      {current.signatures.length === 0 ? <p className="app-review-meta">No signatures yet.</p> : (
        <div className="app-review-table-scroll" data-testid="run-signatures">
        <HTMLTable compact striped className="app-review-signatures">
          <thead><tr><th>Signed by</th><th>Meaning</th><th>Date and time</th><th>Validity</th></tr></thead>
          <tbody>
            {current.signatures.map((signature) => (
              <tr key={signature.id} data-testid="run-signature">
                <td>{signature.signerName}<div className="app-review-meta">{signature.signerEmail}</div></td>
                <td>{signature.meaningLabel}</td>
                <td>{signature.signedAtLocal}</td>
                <td>
                  <SignatureValidityTag signature={signature} />
                  {signature.revokeReason ? <div className="app-review-meta">Reason: {signature.revokeReason}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
        </div>
      )}

      <FormDialog isOpen={signing !== null} title={signingTitle} icon="draw" size="sm" busy={busy}
        submitLabel={signing?.kind === 'approve' ? 'Approve and sign' : signing?.kind === 'release' ? 'Release and sign' : 'Sign'}
        submitDisabled={current.passwordRequired && password === ''}
        onClose={() => { setSigning(null); setPassword(''); }} onSubmit={submitSigning}
        description="Your signature binds this exact version of the run: any later change shows it as no longer valid.">
        {signing?.kind === 'sign' ? (
          <FormGroup label="Meaning" labelFor="signature-meaning">
            <HTMLSelect id="signature-meaning" fill value={meaning} onChange={(event) => setMeaning(event.currentTarget.value)}
              options={current.meanings.map((option) => ({ value: option.code, label: option.label }))} />
          </FormGroup>
        ) : null}
        {current.passwordRequired ? (
          <FormGroup label="Password" labelFor="signature-password" helperText="Enter your password again to sign.">
            <InputGroup id="signature-password" type="password" autoComplete="current-password" value={password}
              onChange={(event) => setPassword(event.currentTarget.value)} autoFocus />
          </FormGroup>
        ) : <p className="app-review-meta">You signed in moments ago: your password is not asked again.</p>}
        {error ? <Callout intent={Intent.DANGER}>{error}</Callout> : null}
      </FormDialog>

      <FormDialog isOpen={reopening} title="Reopen run" icon="undo" size="sm" busy={busy} submitLabel="Reopen" destructive
        submitDisabled={reason.trim() === ''} onClose={() => { setReopening(false); setReason(''); }}
        onSubmit={() => act(() => moveRunReview(runId, 'reopen', { reason: reason.trim() }), 'Run reopened')}
        description="The run goes back to Draft and can be changed again. Its signatures are revoked (kept, marked revoked).">
        <FormGroup label="Reason" labelFor="reopen-reason">
          <TextArea id="reopen-reason" fill rows={3} value={reason} onChange={(event) => setReason(event.currentTarget.value)} />
        </FormGroup>
        {error ? <Callout intent={Intent.DANGER}>{error}</Callout> : null}
      </FormDialog>

      <ReviewReportDialog runId={runId} isOpen={reportOpen} onClose={() => setReportOpen(false)} />
    </Card>
  );
}
