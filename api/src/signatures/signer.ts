/**
 * Who signs, proven at the moment of signing: a signed-in person (never an API key), who enters the
 * password again unless their session began within the organisation's re-authentication window. A
 * wrong password is audited as a failed signature and answers 403 (not 401, which would end the
 * session in the console). Like a run signature, a wrong password here does not count toward the
 * sign-in lockout: the caller is already signed in, and the failure is in the audit trail.
 */
import type { FastifyRequest } from 'fastify';
import { REVIEW_MESSAGES, type SignatureRecordType } from '@bioprocess/shared/run-review';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, forbidden, unauthorized } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { readSessionPolicy } from '../auth/session-policy.ts';
import { findUserById, readPasswordHash } from '../users/repository.ts';
import { recordAudit } from '../audit/record.ts';

export const API_KEY_CANNOT_SIGN = 'Signatures are given by people: sign in to sign';

export interface ProvenSigner {
  id: number;
  name: string;
  email: string;
  authentication: 'password' | 'recent_sign_in';
}

/** Whether the caller's session is too old to sign without the password. */
export async function signingNeedsPassword(deps: AppDeps, request: FastifyRequest): Promise<boolean> {
  const principal = principalOf(request);
  if (principal.kind !== 'session' || principal.sessionId === null) return true;
  const policy = await readSessionPolicy(deps.pg, principal.organizationId);
  if (policy.signing_reauth_minutes === 0) return true;
  const { rows } = await deps.pg.query<{ recent: boolean }>(
    `SELECT created_at > now() - make_interval(mins => $2) AS recent FROM sessions WHERE id = $1`,
    [principal.sessionId, policy.signing_reauth_minutes],
  );
  return !rows[0]?.recent;
}

export interface SigningOptions {
  /** Ask for the password even after a recent sign-in (an organisation's rule for this kind of signature). */
  alwaysPassword?: boolean;
  /** The record's own wording of a missing or wrong password. */
  messages?: { passwordRequired: string; passwordWrong: string };
}

export async function proveSigner(
  deps: AppDeps, request: FastifyRequest, password: string | undefined,
  what: { recordType?: SignatureRecordType; recordId: number; meaning: string }, options: SigningOptions = {},
): Promise<ProvenSigner> {
  const messages = options.messages ?? REVIEW_MESSAGES;
  const principal = principalOf(request);
  if (principal.kind !== 'session' || principal.userId === null) throw forbidden(API_KEY_CANNOT_SIGN);
  const user = await findUserById(deps.pg, principal.userId);
  if (!user) throw unauthorized();
  if (password === undefined || password === '') {
    if (options.alwaysPassword || await signingNeedsPassword(deps, request)) throw badRequest(messages.passwordRequired);
    return { id: user.id, name: user.name, email: user.email, authentication: 'recent_sign_in' };
  }
  if (!(await verifyPassword(await readPasswordHash(deps.pg, user.id), password))) {
    await recordAudit(deps.pg, request, {
      event_type: 'signature.failed', action: 'sign', resource_type: what.recordType ?? 'run', resource_id: what.recordId, success: false,
      changes: { after: { meaning: what.meaning, reason: 'wrong_password' } },
    });
    throw forbidden(messages.passwordWrong);
  }
  return { id: user.id, name: user.name, email: user.email, authentication: 'password' };
}
