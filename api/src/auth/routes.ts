/**
 * Sign-in and account calls: signup, login, logout, profile, forgot and
 * reset password, and the superuser's organisation switch. Every outcome is audited.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import {
  authResponseSchema,
  forgotPasswordRequestSchema,
  loginRequestSchema,
  messageResponseSchema,
  profileSchema,
  resetPasswordRequestSchema,
  signupRequestSchema,
  switchOrganizationRequestSchema,
  updateProfileRequestSchema,
  authUserSchema,
  loginDelayedMessage,
  waitText,
} from '@bioprocess/shared/auth-contracts';
import { withTransaction, type Queryable } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict, forbidden, HttpError, notFound, unauthorized } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { insertOrganization, organizationExists } from '../organizations/repository.ts';
import {
  auditUserFields, findUserByEmail, findUserById, insertSignedUpAdmin, readPasswordHash, setPasswordHash, setUserName,
  setUserOrganization, toAuthUser, toUser,
} from '../users/repository.ts';
import { principalOf } from './authenticate.ts';
import { assertPasswordPolicy, hashPassword, verifyPassword } from './passwords.ts';
import { clearAddressFailures, clearAllFailures, takeLoginAttempt, type ThrottleSettings } from './login-throttle.ts';
import { createSession, revokeAllSessions, revokeSession } from './sessions.ts';
import { consumeLinkToken, createResetLinkWithinLimit, isLinkTokenLive, sendResetMail } from './reset-tokens.ts';
import { hashToken } from './principal.ts';
import { usesDevOutbox } from '../mail/mailer.ts';
import { addressLimit } from '../platform/address-limits.ts';

export const FORGOT_PASSWORD_MESSAGE = 'If an account exists for this email, a password reset link has been sent.';
export const PASSWORD_RESET_MESSAGE = 'Your password has been reset. You can now log in with your new password.';
export const EMAIL_TAKEN_MESSAGE = 'An account with this email already exists';
export const USER_SESSION_REQUIRED_MESSAGE = 'This call needs a signed-in user, not an API key';

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === UNIQUE_VIOLATION;
}

/** The user behind a session principal; API keys have no user account. */
export function sessionUserId(request: FastifyRequest): number {
  const principal = principalOf(request);
  if (principal.kind !== 'session' || principal.userId === null) throw forbidden(USER_SESSION_REQUIRED_MESSAGE);
  return principal.userId;
}

export async function authRoutes(app: App, deps: AppDeps): Promise<void> {
  const throttle: ThrottleSettings = {
    maxFailures: deps.env.LOGIN_MAX_FAILURES,
    windowMinutes: deps.env.LOGIN_WINDOW_MINUTES,
    accountMaxFailures: deps.env.LOGIN_ACCOUNT_MAX_FAILURES,
    accountDelayMinSeconds: deps.env.LOGIN_ACCOUNT_DELAY_MIN_SECONDS,
    accountDelayMaxSeconds: deps.env.LOGIN_ACCOUNT_DELAY_MAX_SECONDS,
  };

  app.post('/api/v1/auth/signup', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'signup') },
    schema: {
      tags: ['auth'],
      summary: 'Create an organisation with the new user as its admin',
      body: signupRequestSchema.extend({ organization_name: z.string().trim().min(1).max(200).optional() }),
      response: { 201: authResponseSchema },
    },
  }, async (request, reply) => {
    if (!deps.env.SIGNUP_ENABLED) throw forbidden(AUTH_MESSAGES.signupDisabled);
    const { email, password, name, organization_name: organizationName } = request.body;
    assertPasswordPolicy(password);
    const passwordHash = await hashPassword(password);
    const created = await withTransaction(deps.pg, async (client) => {
      if (await findUserByEmail(client, email)) throw conflict(EMAIL_TAKEN_MESSAGE);
      const newOrganizationName = organizationName ?? `${name}'s organization`;
      const organization = { id: await insertOrganization(client, { name: newOrganizationName, description: null }), name: newOrganizationName };
      const userId = await insertSignedUpAdmin(client, { email, name, passwordHash, organizationId: organization.id });
      const user = (await findUserById(client, userId))!;
      const token = await createSession(client, user.id, deps.env.SESSION_TTL_HOURS);
      await recordAudit(client, request, {
        event_type: 'auth.signup', action: 'create', resource_type: 'user', resource_id: user.id,
        user_id: user.id, user_email: user.email, organization_id: user.organization_id,
        changes: { after: { user: auditUserFields(user), organization } },
      });
      return { user, token };
    }).catch((error: unknown) => {
      if (isUniqueViolation(error)) throw conflict(EMAIL_TAKEN_MESSAGE);
      throw error;
    });
    const { user, token } = created;
    return reply.status(201).send({ token, user: toAuthUser(user) });
  });

  app.post('/api/v1/auth/login', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'signIn') },
    schema: {
      tags: ['auth'],
      summary: 'Exchange email and password for a session token',
      body: loginRequestSchema,
      response: { 200: authResponseSchema },
    },
  }, async (request, reply) => {
    const { email, password } = request.body;
    // request.ip honours TRUST_PROXY: behind a trusted proxy it is the client the proxy names.
    const clientAddress = request.ip;
    // A refused sign-in changes nothing but the attempt count: its event is committed on its own.
    const failure = (reason: string, user: { id: number; organization_id: number } | null) =>
      recordAudit(deps.pg, request, {
        event_type: 'auth.login', action: 'login', resource_type: 'user', resource_id: user?.id ?? null,
        success: false, user_id: user?.id ?? null, user_email: email, organization_id: user?.organization_id ?? null,
        changes: { after: { reason } },
      });

    const user = await findUserByEmail(deps.pg, email);
    const account = { userId: user?.id ?? null, email };
    // Counted before the (slow) verification, so concurrent guesses cannot outrun the count.
    const attempt = await takeLoginAttempt(deps.pg, account, clientAddress, throttle);
    if (!attempt.allowed) {
      await failure(attempt.reason, user);
      reply.header('retry-after', attempt.retryAfterSeconds);
      throw new HttpError(429, attempt.reason === 'address_blocked' ? AUTH_MESSAGES.loginBlocked : loginDelayedMessage(waitText(attempt.retryAfterSeconds)));
    }
    const passwordHash = user ? await readPasswordHash(deps.pg, user.id) : null;
    const valid = await verifyPassword(passwordHash, password);
    if (!user || !valid) {
      const failures = attempt.addressAttempts;
      await failure('invalid_credentials', user);
      if (failures >= throttle.maxFailures) {
        // Only this address is blocked for the account; the owner elsewhere still signs in.
        await recordAudit(deps.pg, request, {
          event_type: 'auth.lockout', action: 'lockout', resource_type: 'user', resource_id: user?.id ?? null,
          success: false, user_id: user?.id ?? null, user_email: email, organization_id: user?.organization_id ?? null,
          changes: { after: { failures, window_minutes: throttle.windowMinutes, scope: 'address' } },
        });
        reply.header('retry-after', throttle.windowMinutes * 60);
        throw new HttpError(429, AUTH_MESSAGES.loginBlocked);
      }
      throw unauthorized(AUTH_MESSAGES.invalidCredentials);
    }
    await clearAddressFailures(deps.pg, account, clientAddress);
    const token = await withTransaction(deps.pg, async (client) => {
      const session = await createSession(client, user.id, deps.env.SESSION_TTL_HOURS);
      await recordAudit(client, request, {
        event_type: 'auth.login', action: 'login', resource_type: 'user', resource_id: user.id,
        user_id: user.id, user_email: user.email, organization_id: user.organization_id,
      });
      return session;
    });
    return { token, user: toAuthUser(user) };
  });

  app.post('/api/v1/auth/logout', {
    config: { access: 'authenticated' },
    schema: { tags: ['auth'], summary: 'Revoke the current session token' },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      if (principal.kind === 'session' && principal.sessionId !== null) await revokeSession(client, principal.sessionId);
      await recordAudit(client, request, { event_type: 'auth.logout', action: 'logout', resource_type: 'session', resource_id: principal.sessionId });
    });
    return reply.status(204).send();
  });

  app.get('/api/v1/auth/profile', {
    config: { access: 'authenticated' },
    schema: { tags: ['auth'], summary: 'The signed-in user', response: { 200: profileSchema } },
  }, async (request) => {
    const user = await findUserById(deps.pg, sessionUserId(request));
    if (!user) throw unauthorized();
    return toUser(user);
  });

  app.put('/api/v1/auth/profile', {
    config: { access: 'authenticated' },
    schema: { tags: ['auth'], summary: 'Change the signed-in user\'s name', body: updateProfileRequestSchema, response: { 200: profileSchema } },
  }, async (request) => {
    const userId = sessionUserId(request);
    const after = await withTransaction(deps.pg, async (client) => {
      const before = await findUserById(client, userId, { forUpdate: true });
      if (!before) throw unauthorized();
      await setUserName(client, userId, request.body.name);
      const updated = (await findUserById(client, userId))!;
      await recordAudit(client, request, {
        event_type: 'user.profile_updated', action: 'update', resource_type: 'user', resource_id: userId,
        changes: { before: { name: before.name }, after: { name: updated.name } },
      });
      return updated;
    });
    return toUser(after);
  });

  app.post('/api/v1/auth/forgot-password', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'passwordReset') },
    schema: { tags: ['auth'], summary: 'Send a password reset link (same answer whether or not the email exists)', body: forgotPasswordRequestSchema, response: { 200: messageResponseSchema } },
  }, async (request) => {
    const { email } = request.body;
    const user = await findUserByEmail(deps.pg, email);
    const audit = (db: Queryable, mailed: boolean) => recordAudit(db, request, {
      event_type: 'auth.password_reset_requested', action: 'password_reset_request', resource_type: 'user',
      resource_id: user?.id ?? null, success: mailed, user_id: user?.id ?? null, user_email: email,
      organization_id: user?.organization_id ?? null,
      ...(user && !mailed ? { changes: { after: { reason: 'hourly_mail_limit' } } } : {}),
    });
    if (!user) {
      await audit(deps.pg, false);
      return { message: FORGOT_PASSWORD_MESSAGE };
    }
    const delivery = (async () => {
      // The link is issued under a lock of the account: a burst of requests sends at most the hourly
      // budget and leaves exactly one live link. Its audit event commits with it.
      const token = await withTransaction(deps.pg, async (client) => {
        const issued = await createResetLinkWithinLimit(client, user.id, deps.env.RESET_TOKEN_TTL_MINUTES, deps.env.FORGOT_PASSWORD_MAILS_PER_HOUR);
        await audit(client, issued !== null);
        return issued;
      });
      if (token) await sendResetMail(deps, user.email, token);
    })().catch((error: unknown) => {
      // The caller gets the same answer either way; the failure is for operators.
      request.log.error({ err: error }, 'password reset mail could not be sent');
    });
    // A real mail server is not waited for: its latency would tell callers which emails have accounts.
    // The dev outbox is a local insert, awaited so the link can be read as soon as the call answers.
    if (usesDevOutbox(deps.env)) await delivery;
    return { message: FORGOT_PASSWORD_MESSAGE };
  });

  app.post('/api/v1/auth/reset-password', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'passwordReset') },
    schema: { tags: ['auth'], summary: 'Set a new password with a reset or invitation token', body: resetPasswordRequestSchema, response: { 200: messageResponseSchema } },
  }, async (request) => {
    const { token, password } = request.body;
    assertPasswordPolicy(password);
    const tokenHash = hashToken(token);
    // The token is checked before the password is hashed: hashing is what costs, and only a caller
    // holding a live link may make the server pay for it. It is spent in the transaction below.
    const passwordHash = (await isLinkTokenLive(deps.pg, tokenHash)) ? await hashPassword(password) : null;
    const result = passwordHash === null ? null : await withTransaction(deps.pg, async (client) => {
      const consumed = await consumeLinkToken(client, tokenHash);
      if (!consumed) return null;
      await setPasswordHash(client, consumed.userId, passwordHash);
      // The mailed link is the owner's way in whatever the sign-in counts: it clears them all.
      await clearAllFailures(client, consumed.userId);
      const revokedSessions = await revokeAllSessions(client, consumed.userId);
      const user = (await findUserById(client, consumed.userId))!;
      await recordAudit(client, request, {
        event_type: 'auth.password_reset_completed', action: 'password_reset', resource_type: 'user', resource_id: consumed.userId,
        user_id: consumed.userId, user_email: user.email, organization_id: user.organization_id,
        changes: { after: { purpose: consumed.purpose, password_changed: true, sessions_revoked: revokedSessions } },
      });
      return consumed;
    });
    if (!result) {
      await recordAudit(deps.pg, request, {
        event_type: 'auth.password_reset_completed', action: 'password_reset', resource_type: 'user', success: false,
        changes: { after: { reason: 'invalid_token' } },
      });
      throw new HttpError(400, AUTH_MESSAGES.invalidResetToken);
    }
    return { message: PASSWORD_RESET_MESSAGE };
  });

  app.post('/api/v1/auth/switch-organization', {
    config: { access: 'superuser' },
    schema: {
      tags: ['auth'],
      summary: 'Superusers: make another organisation the current one',
      body: switchOrganizationRequestSchema,
      response: { 200: z.object({ message: z.string(), user: authUserSchema }) },
    },
  }, async (request) => {
    const userId = sessionUserId(request);
    const organizationId = request.body.organizationId;
    const after = await withTransaction(deps.pg, async (client) => {
      if (!await organizationExists(client, organizationId)) throw notFound('Organization not found');
      const before = (await findUserById(client, userId, { forUpdate: true }))!;
      await setUserOrganization(client, userId, organizationId);
      const switched = (await findUserById(client, userId))!;
      await recordAudit(client, request, {
        event_type: 'user.organization_switched', action: 'update', resource_type: 'user', resource_id: userId,
        organization_id: organizationId,
        changes: { before: { organization_id: before.organization_id }, after: { organization_id: switched.organization_id } },
      });
      return switched;
    });
    return { message: 'Organization switched successfully', user: toAuthUser(after) };
  });
}
