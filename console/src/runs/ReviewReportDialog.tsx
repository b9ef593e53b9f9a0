/** The review-by-exception report of a run in a dialog, with its CSV and PDF downloads. */
import { Button, Callout, Dialog, DialogBody, DialogFooter, H5, HTMLTable, Intent, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { useState } from 'react';
import { formatInstantInZone } from '@bioprocess/shared/run-review';
import { dialogStyle } from '../components/dialogs/dialog-size.ts';
import { downloadExport } from '../exports/export-request.ts';
import { SignatureValidityTag } from './RunReviewPanel.tsx';
import { reviewReportPath, useReviewReport, type ReviewReportEntryView } from './run-review-queries.ts';

const KIND_LABELS: Record<ReviewReportEntryView['kind'], string> = {
  change: 'Change', deletion: 'Deletion', upload: 'Upload', signature: 'Signature', review: 'Review',
};

function change(entry: ReviewReportEntryView): string {
  if (entry.field && entry.kind !== 'signature') return `${entry.field}: ${entry.oldValue ?? '(empty)'} → ${entry.newValue ?? '(empty)'}`;
  return entry.detail ?? '';
}

export function ReviewReportDialog({ runId, isOpen, onClose }: { runId: number; isOpen: boolean; onClose: () => void }) {
  const report = useReviewReport(isOpen ? runId : null);
  const [downloading, setDownloading] = useState<'csv' | 'pdf' | null>(null);
  const [error, setError] = useState<string | null>(null);

  const download = async (format: 'csv' | 'pdf') => {
    setDownloading(format);
    setError(null);
    try {
      await downloadExport(reviewReportPath(runId, format), `review-report-${runId}.${format}`);
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setDownloading(null);
    }
  };
  const data = report.data;
  const exceptions = data?.entries.filter((entry) => entry.kind !== 'signature') ?? [];

  return (
    <Dialog isOpen={isOpen} onClose={onClose} title={data ? `Review report: ${data.run.name}` : 'Review report'} icon="document"
      style={dialogStyle('7xl')} className="app-dialog">
      <DialogBody className="app-dialog-body">
        {report.error ? <Callout intent={Intent.DANGER}>Failed to load the review report.</Callout> : null}
        {!data && !report.error ? <NonIdealState icon={<Spinner size={32} />} title="Loading report..." /> : null}
        {data ? (
          <>
            <p className="app-review-meta">
              Every change after first entry, every deletion, every failed or replacing upload, every review step and every signature.
              Times in {data.timeZone}. Generated {formatInstantInZone(data.generatedAt, data.timeZone)}.
            </p>
            <H5 className="app-review-section-title">Signatures</H5>
            {data.signatures.length === 0 ? <p>None.</p> : (
              <HTMLTable compact striped className="app-review-table">
                <thead><tr><th>Signed by</th><th>Meaning</th><th>Date and time</th><th>Validity</th></tr></thead>
                <tbody>
                  {data.signatures.map((signature) => (
                    <tr key={signature.id}>
                      <td>{signature.signerName}</td><td>{signature.meaningLabel}</td><td>{signature.signedAtLocal}</td>
                      <td><SignatureValidityTag signature={signature} />{signature.revokeReason ? ` ${signature.revokeReason}` : ''}</td>
                    </tr>
                  ))}
                </tbody>
              </HTMLTable>
            )}
            <H5 className="app-review-section-title">Exceptions ({exceptions.length})</H5>
            {exceptions.length === 0 ? <p>None: nothing was changed or deleted after first entry.</p> : (
              <div className="app-review-table-scroll" data-testid="review-report-entries">
              <HTMLTable compact striped className="app-review-table">
                <thead><tr><th>When</th><th>Kind</th><th>Record</th><th>Change</th><th>Who</th><th>Reason</th></tr></thead>
                <tbody>
                  {exceptions.map((entry, index) => (
                    <tr key={`${entry.at}-${index}`}>
                      <td>{formatInstantInZone(entry.at, data.timeZone)}</td>
                      <td><Tag minimal intent={entry.kind === 'deletion' ? Intent.DANGER : entry.kind === 'review' ? Intent.PRIMARY : Intent.NONE}>{KIND_LABELS[entry.kind]}</Tag></td>
                      <td>{entry.record}</td><td className="app-review-change">{change(entry)}</td><td>{entry.who ?? '-'}</td><td>{entry.reason ?? '-'}</td>
                    </tr>
                  ))}
                </tbody>
              </HTMLTable>
              </div>
            )}
          </>
        ) : null}
        {error ? <Callout intent={Intent.DANGER}>{error}</Callout> : null}
      </DialogBody>
      <DialogFooter actions={(
        <>
          <Button icon="download" text="Download CSV" loading={downloading === 'csv'} onClick={() => void download('csv')} />
          <Button icon="document" text="Download PDF" loading={downloading === 'pdf'} onClick={() => void download('pdf')} />
          <Button text="Close" variant="minimal" onClick={onClose} />
        </>
      )} />
    </Dialog>
  );
}
