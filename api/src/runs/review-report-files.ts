/**
 * The review report as files: CSV (one row per entry, then one per signature) and PDF (drawn with
 * pdfkit). Both show every signature with the signer's printed name, the meaning, the date and time in
 * the organisation's zone with its offset, and its validity, as Part 11 asks of a printed record.
 */
import PDFDocument from 'pdfkit';
import { csvRow } from '@bioprocess/shared/csv/write';
import { REVIEW_STATE_LABELS, formatInstantInZone, type ReviewReport } from '@bioprocess/shared/run-review';

export function reviewReportCsv(report: ReviewReport): string {
  return [
    csvRow(['kind', 'at', 'at_local', 'who', 'record', 'field', 'old_value', 'new_value', 'reason', 'detail']),
    ...report.entries.map((entry) => csvRow([
      entry.kind, entry.at, formatInstantInZone(entry.at, report.time_zone), entry.who, entry.record, entry.field,
      entry.old_value, entry.new_value, entry.reason, entry.detail,
    ])),
  ].join('');
}

export function reviewReportFileName(report: ReviewReport, extension: 'csv' | 'pdf'): string {
  const name = report.run.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || `run-${report.run.id}`;
  return `review-report-${name}.${extension}`;
}

export function reviewReportPdf(report: ReviewReport): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 48, info: { Title: `Review report: ${report.run.name}` } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const local = (iso: string) => formatInstantInZone(iso, report.time_zone);

  doc.font('Helvetica-Bold').fontSize(16).text(`Review report: run ${report.run.name}`);
  doc.font('Helvetica').fontSize(9).fillColor('#444')
    .text(`Review state: ${REVIEW_STATE_LABELS[report.state]}    Generated: ${local(report.generated_at)}`)
    .text(`Run created: ${local(report.run.created_at)}    Content SHA-256 now: ${report.content_sha256}`);
  doc.moveDown();

  doc.fillColor('#000').font('Helvetica-Bold').fontSize(12).text('Signatures');
  doc.font('Helvetica').fontSize(9);
  if (report.signatures.length === 0) doc.text('None.');
  for (const signature of report.signatures) {
    const validity = signature.validity === 'valid' ? 'Valid' : signature.validity === 'revoked'
      ? `Revoked ${signature.revoked_at ? local(signature.revoked_at) : ''}${signature.revoke_reason ? `: ${signature.revoke_reason}` : ''}`
      : 'No longer valid: the run changed after signing';
    doc.font('Helvetica-Bold').text(`${signature.meaning_label}: ${signature.signer_name}`, { continued: true })
      .font('Helvetica').text(`  (${signature.signer_email}), ${signature.signed_at_local}`);
    doc.fillColor(signature.validity === 'valid' ? '#0d8050' : '#c23030').text(validity).fillColor('#000');
    doc.fontSize(7).fillColor('#666').text(`Signed content SHA-256 ${signature.content_sha256}`).fontSize(9).fillColor('#000');
    doc.moveDown(0.4);
  }
  doc.moveDown();

  doc.font('Helvetica-Bold').fontSize(12).text('Exceptions: changes after first entry, deletions, uploads, review steps');
  doc.font('Helvetica').fontSize(9);
  const exceptions = report.entries.filter((entry) => entry.kind !== 'signature');
  if (exceptions.length === 0) doc.text('None.');
  for (const entry of exceptions) {
    doc.font('Helvetica-Bold').text(`${local(entry.at)}  ${entry.kind.toUpperCase()}  ${entry.record}`, { continued: false });
    doc.font('Helvetica');
    if (entry.who) doc.text(`By: ${entry.who}`);
    if (entry.field) doc.text(`${entry.field}: ${entry.old_value ?? '(empty)'} -> ${entry.new_value ?? '(empty)'}`);
    else if (entry.old_value) doc.text(`Before: ${entry.old_value.slice(0, 600)}`);
    if (entry.reason) doc.text(`Reason: ${entry.reason}`);
    if (entry.detail) doc.text(entry.detail);
    doc.moveDown(0.4);
  }
  doc.end();
  return done;
}
