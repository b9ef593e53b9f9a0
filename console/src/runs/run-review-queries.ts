/**
 * Console data access of run review: the review (state, signatures, meanings), its key for
 * revalidation, and the actions (sign, transitions) with the api's own error texts.
 */
import { runReviewSchema, reviewReportSchema, type ReviewAction, type ReviewState } from '@bioprocess/shared/run-review';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';

export interface SignatureView {
  id: number;
  meaning: string;
  meaningLabel: string;
  signerName: string;
  signerEmail: string;
  signedAt: string;
  signedAtLocal: string;
  validity: 'valid' | 'invalid' | 'revoked';
  revokedAt: string | null;
  revokeReason: string | null;
  contentSha256: string;
}

export interface RunReviewView {
  runId: number;
  state: ReviewState;
  stateLabel: string;
  changedAt: string | null;
  changedByName: string | null;
  contentSha256: string;
  signatures: SignatureView[];
  passwordRequired: boolean;
  meanings: Array<{ code: string; label: string; builtIn: boolean }>;
}

export interface ReviewReportEntryView {
  kind: 'change' | 'deletion' | 'upload' | 'signature' | 'review';
  at: string;
  who: string | null;
  record: string;
  field: string | null;
  oldValue: string | null;
  newValue: string | null;
  reason: string | null;
  detail: string | null;
}

export interface ReviewReportView {
  run: { id: number; name: string; createdAt: string };
  generatedAt: string;
  timeZone: string;
  state: ReviewState;
  contentSha256: string;
  entries: ReviewReportEntryView[];
  signatures: SignatureView[];
}

export const runReviewKey = (runId: number) => `/api/v1/runs/${runId}/review`;
export const reviewReportPath = (runId: number, format: 'json' | 'csv' | 'pdf' = 'json') =>
  `/api/v1/runs/${runId}/review-report${format === 'json' ? '' : `?format=${format}`}`;

export function useRunReview(runId: number | null) {
  return useApi<RunReviewView>(runId ? runReviewKey(runId) : null, runReviewSchema);
}

export function useReviewReport(runId: number | null) {
  return useApi<ReviewReportView>(runId ? reviewReportPath(runId) : null, reviewReportSchema);
}

export function signRun(runId: number, meaning: string, password: string | undefined): Promise<SignatureView> {
  return apiRequest<SignatureView>('POST', `/api/v1/runs/${runId}/signatures`, { meaning, ...(password ? { password } : {}) });
}

export function moveRunReview(runId: number, action: ReviewAction, fields: { reason?: string; password?: string } = {}): Promise<RunReviewView> {
  return apiRequest<RunReviewView>('POST', `/api/v1/runs/${runId}/review`, { action, ...fields }, { schema: runReviewSchema });
}
