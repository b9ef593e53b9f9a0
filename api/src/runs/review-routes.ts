/**
 * Run review and release: the run's review state (Draft -> In review -> Approved -> Released, and
 * back to Draft with a reason, which revokes its signatures), signing the run, and the
 * review-by-exception report. Signing and the transitions that sign (approve, release) prove the
 * signer (signatures/signer.ts) and bind the signature to the run's content hash as it is now.
 */
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import {
  REVIEW_MESSAGES, REVIEW_STATE_LABELS, reviewReportQuerySchema, reviewReportSchema, reviewTransitionSchema, runReviewSchema,
  signRequestSchema, signatureSchema, type ReviewAction, type ReviewReport, type ReviewState, type RunReview, type Signature,
} from '@bioprocess/shared/run-review';
import { can } from '@bioprocess/shared/permissions';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict, forbidden } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { organizationTimeZone } from '../organizations/settings.ts';
import { parseChangeReason, readChangeReasonSettings } from '../platform/change-reason.ts';
import { insertSignature, listRecordSignatures, listSignatureMeanings, revokeRecordSignatures } from '../signatures/repository.ts';
import { runContentHash } from '../signatures/run-content.ts';
import { proveSigner, signingNeedsPassword, type ProvenSigner } from '../signatures/signer.ts';
import { requireRun } from './repository.ts';
import { buildReviewReport } from './review-report.ts';
import { reviewReportCsv, reviewReportFileName, reviewReportPdf } from './review-report-files.ts';

const tags = ['Run review'];
const errors = { 400: errorResponseSchema, 403: errorResponseSchema, 404: errorResponseSchema, 409: errorResponseSchema };

interface ReviewRow { state: ReviewState; changed_at: Date | null; changed_by_name: string | null }

async function readReviewRow(db: pg.Pool | pg.PoolClient, runId: number): Promise<ReviewRow> {
  const { rows } = await db.query<ReviewRow>(
    `SELECT rr.state, rr.changed_at, u.name AS changed_by_name FROM run_reviews rr LEFT JOIN users u ON u.id = rr.changed_by WHERE rr.run_id = $1`,
    [runId],
  );
  return rows[0] ?? { state: 'draft', changed_at: null, changed_by_name: null };
}

/** Which state each action leaves from and goes to, and whether it needs the approver's role and a signature. */
const TRANSITIONS: Record<ReviewAction, { from: readonly ReviewState[]; to: ReviewState; approver: boolean; signs: string | null }> = {
  submit: { from: ['draft'], to: 'in_review', approver: false, signs: null },
  approve: { from: ['in_review'], to: 'approved', approver: true, signs: 'approved' },
  release: { from: ['approved'], to: 'released', approver: true, signs: 'released' },
  reopen: { from: ['in_review', 'approved', 'released'], to: 'draft', approver: false, signs: null },
};

export const APPROVER_ROLE_MESSAGE = 'Approving or releasing a run, or reopening an approved one, needs the admin role';

async function signRun(
  client: pg.PoolClient, request: FastifyRequest, organizationId: number, runId: number, meaningCode: string, signer: ProvenSigner,
): Promise<Signature> {
  const meaning = (await listSignatureMeanings(client, organizationId)).find((candidate) => candidate.code === meaningCode);
  if (!meaning) throw badRequest(`meaning: unknown signature meaning '${meaningCode}'`);
  const contentSha256 = await runContentHash(client, organizationId, runId);
  const signature = await insertSignature(client, organizationId, {
    recordId: runId, meaning, signer, timeZone: await organizationTimeZone(client, organizationId), contentSha256,
    authentication: signer.authentication,
  });
  await recordAudit(client, request, {
    event_type: 'signature.signed', action: 'sign', resource_type: 'run', resource_id: runId,
    changes: { before: null, after: { signature_id: signature.id, meaning: meaning.code, meaning_label: meaning.label, signer_name: signer.name,
      signed_at: signature.signed_at, content_sha256: contentSha256, authentication: signer.authentication } },
  });
  return signature;
}

export async function runReviewRoutes(app: App, deps: AppDeps): Promise<void> {
  async function reviewOf(request: FastifyRequest, runId: number): Promise<RunReview> {
    const { organizationId } = principalOf(request);
    await requireRun(deps.pg, organizationId, runId);
    const row = await readReviewRow(deps.pg, runId);
    const contentHash = await runContentHash(deps.pg, organizationId, runId);
    return {
      run_id: runId, state: row.state, state_label: REVIEW_STATE_LABELS[row.state],
      changed_at: row.changed_at ? row.changed_at.toISOString() : null, changed_by_name: row.changed_by_name,
      content_sha256: contentHash,
      signatures: await listRecordSignatures(deps.pg, organizationId, runId, contentHash),
      password_required: await signingNeedsPassword(deps, request),
      meanings: await listSignatureMeanings(deps.pg, organizationId),
    };
  }

  app.get('/api/v1/runs/:id/review', {
    config: { access: 'read' },
    schema: {
      tags, summary: "A run's review state and signatures",
      description: 'Each signature\'s validity is computed now: revoked (the run was reopened), invalid (the run\'s content hash differs '
        + 'from the one signed) or valid. password_required: whether the caller must enter the password to sign now.',
      params: idParamsSchema, response: { 200: runReviewSchema, ...errors },
    },
  }, async (request) => reviewOf(request, request.params.id));

  app.post('/api/v1/runs/:id/signatures', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Sign the run as it is now',
      description: 'meaning: a built-in meaning (authored, reviewed, approved, released) or one of the organisation\'s own. The signature '
        + 'is bound to the SHA-256 of the run\'s canonical content (docs/signatures.md). password: required unless the signer signed in '
        + 'within the organisation\'s re-authentication window (400 without it, 403 when wrong). API keys cannot sign.',
      params: idParamsSchema, body: signRequestSchema, response: { 201: signatureSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const runId = request.params.id;
    await requireRun(deps.pg, organizationId, runId);
    const signer = await proveSigner(deps, request, request.body.password, { recordId: runId, meaning: request.body.meaning });
    const signature = await withTransaction(deps.pg, async (client) => {
      // The update lock keeps a change from landing between hashing and recording (changes take a share lock).
      await requireRun(client, organizationId, runId, { lock: 'update' });
      return signRun(client, request, organizationId, runId, request.body.meaning, signer);
    });
    return reply.status(201).send(signature);
  });

  app.post('/api/v1/runs/:id/review', {
    config: { access: 'edit' },
    schema: {
      tags, summary: 'Move the run through review',
      description: 'submit: Draft -> In review (the run is locked: changes answer 409). approve: In review -> Approved and release: '
        + 'Approved -> Released, each signing the run with that meaning (admins; password as for signing). reopen: back to Draft, '
        + 'reason required; its signatures are marked revoked (kept, never deleted). Reopening an approved or released run needs an admin.',
      params: idParamsSchema, body: reviewTransitionSchema, response: { 200: runReviewSchema, ...errors },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const { organizationId } = principal;
    const runId = request.params.id;
    const { action } = request.body;
    const transition = TRANSITIONS[action];
    const run = await requireRun(deps.pg, organizationId, runId);
    // Reopening takes its reason in the body, read by the same rules as the reason-for-change headers.
    let reason: { text: string | null; code: string | null } | null = null;
    if (action === 'reopen') {
      const parsed = parseChangeReason({ text: request.body.reason, code: request.body.reason_code },
        (await readChangeReasonSettings(deps.pg, organizationId)).reasons, { encoded: false });
      if (!parsed.ok) throw badRequest(`reason: ${parsed.error}`);
      if (!parsed.reason) throw badRequest(REVIEW_MESSAGES.reasonRequired);
      reason = parsed.reason;
    }
    const reasonText = reason ? [reason.code, reason.text].filter(Boolean).join(': ') : null;
    const current = await readReviewRow(deps.pg, runId);
    const needsApprover = transition.approver || (action === 'reopen' && current.state !== 'in_review');
    if (needsApprover && !can(principal, 'manage_users')) throw forbidden(APPROVER_ROLE_MESSAGE);
    const signer = transition.signs ? await proveSigner(deps, request, request.body.password, { recordId: runId, meaning: transition.signs }) : null;
    await withTransaction(deps.pg, async (client) => {
      await requireRun(client, organizationId, runId, { lock: 'update' });
      const before = await readReviewRow(client, runId);
      if (!transition.from.includes(before.state)) {
        throw conflict(`Run "${run.name}" is ${REVIEW_STATE_LABELS[before.state]}: ${action} needs it ${transition.from.map((state) => REVIEW_STATE_LABELS[state]).join(' or ')}`);
      }
      if (signer && transition.signs) await signRun(client, request, organizationId, runId, transition.signs, signer);
      const revoked = action === 'reopen'
        ? await revokeRecordSignatures(client, organizationId, runId, principal.userId, reasonText!)
        : [];
      await client.query(
        `INSERT INTO run_reviews (run_id, organization_id, state, changed_by, changed_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (run_id) DO UPDATE SET state = EXCLUDED.state, changed_by = EXCLUDED.changed_by, changed_at = EXCLUDED.changed_at`,
        [runId, organizationId, transition.to, principal.userId],
      );
      await recordAudit(client, request, {
        event_type: 'run.review', action, resource_type: 'run', resource_id: runId,
        ...(reason ? { change_reason: reason } : {}),
        changes: {
          before: { state: before.state, state_label: REVIEW_STATE_LABELS[before.state] },
          after: { state: transition.to, state_label: REVIEW_STATE_LABELS[transition.to], reason: reasonText, revoked_signature_ids: revoked },
        },
      });
    });
    return reviewOf(request, runId);
  });

  app.get('/api/v1/runs/:id/review-report', {
    config: { access: 'read' },
    schema: {
      tags, summary: 'The review-by-exception report of a run (JSON, CSV or PDF)',
      description: 'Every change after first entry (field, old, new, who, when, reason), every deletion, every failed upload or deletion '
        + 'job and every upload that replaced readings, every review step, and every signature with its validity now. format=csv or '
        + 'format=pdf answers a file download.',
      params: idParamsSchema, querystring: reviewReportQuerySchema,
      response: { 200: reviewReportSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const runId = request.params.id;
    await requireRun(deps.pg, organizationId, runId);
    const report = await buildReviewReport(deps.pg, organizationId, runId, (await readReviewRow(deps.pg, runId)).state);
    const format = request.query.format;
    if (format === 'json') return report;
    reply.header('content-disposition', `attachment; filename="${reviewReportFileName(report, format)}"`);
    // The declared 200 schema is the JSON form; files go out as bytes, untouched by the serializer.
    const file: unknown = format === 'csv' ? reviewReportCsv(report) : await reviewReportPdf(report);
    return reply.type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/pdf').send(file as ReviewReport);
  });
}
