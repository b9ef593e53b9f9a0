/**
 * The public identity calls and their failure texts. They run without a
 * token, so they use fetch directly rather than the authenticated helper.
 */
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { readJsonBody, serverErrorOf } from '../api/client.ts';
import { authResponseSchema, toSessionUser, type SessionUser } from './user.ts';

export const LOGIN_FAILED = 'Login failed';
export const SIGNUP_FAILED = 'Signup failed';
export const FORGOT_PASSWORD_FAILED = 'Failed to send reset email';
export const RESET_PASSWORD_FAILED = 'Failed to reset password';

export interface AuthResult {
  token: string;
  user: SessionUser;
}

/** A network failure surfaces as the call's own fallback text, not the browser's 'Failed to fetch'. */
async function postJson(path: string, body: unknown, fallback: string, token?: string): Promise<{ response: Response; payload: unknown }> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new Error(fallback);
  }
  return { response, payload: await readJsonBody(response) };
}

function toAuthResult(payload: unknown, fallback: string): AuthResult {
  const parsed = authResponseSchema.safeParse(payload);
  if (!parsed.success) throw new Error(fallback);
  return { token: parsed.data.token, user: toSessionUser(parsed.data.user) };
}

export async function loginRequest(email: string, password: string): Promise<AuthResult> {
  const { response, payload } = await postJson('/api/v1/auth/login', { email, password }, LOGIN_FAILED);
  if (!response.ok) {
    const fallback = response.status === 429 ? AUTH_MESSAGES.loginBlocked : LOGIN_FAILED;
    throw new Error(serverErrorOf(payload) ?? fallback);
  }
  return toAuthResult(payload, LOGIN_FAILED);
}

export async function signupRequest(email: string, password: string, name: string): Promise<AuthResult> {
  const { response, payload } = await postJson('/api/v1/auth/signup', { email, password, name }, SIGNUP_FAILED);
  if (!response.ok) throw new Error(serverErrorOf(payload) ?? SIGNUP_FAILED);
  return toAuthResult(payload, SIGNUP_FAILED);
}

/** Errors are ignored: signing out locally must never depend on the server answering. */
export async function logoutRequest(token: string): Promise<void> {
  try {
    await postJson('/api/v1/auth/logout', undefined, 'Logout failed', token);
  } catch {
    // The local session is cleared by the caller regardless.
  }
}

export async function forgotPasswordRequest(email: string): Promise<void> {
  const { response, payload } = await postJson('/api/v1/auth/forgot-password', { email }, FORGOT_PASSWORD_FAILED);
  if (!response.ok) throw new Error(serverErrorOf(payload) ?? FORGOT_PASSWORD_FAILED);
}

export async function resetPasswordRequest(token: string, password: string): Promise<void> {
  const { response, payload } = await postJson('/api/v1/auth/reset-password', { token, password }, RESET_PASSWORD_FAILED);
  if (!response.ok) throw new Error(serverErrorOf(payload) ?? RESET_PASSWORD_FAILED);
}
