/**
 * Signing in for end-to-end tests. The accounts are the ones deploy/local/e2e-stack.mjs seeds; the
 * environment can override them (DEMO_EMAIL, DEMO_PASSWORD, SUPERUSER_EMAIL, SUPERUSER_PASSWORD).
 */
import { expect, type APIRequestContext, type Page } from '@playwright/test';

/** Admin of the seeded demo organisation. */
export const DEMO_EMAIL = process.env.DEMO_EMAIL ?? 'scientist@demo.bioprocess.local';
export const DEMO_PASSWORD = process.env.DEMO_PASSWORD ?? 'Demo-Bioprocess1!';
/** The platform superuser. */
export const SUPERUSER_EMAIL = process.env.SUPERUSER_EMAIL ?? 'admin@bioprocess.local';
export const SUPERUSER_PASSWORD = process.env.SUPERUSER_PASSWORD ?? 'Admin-Bioprocess1!';

/** Signs in through the login form and waits for the dashboard. */
export async function signIn(page: Page, email: string = DEMO_EMAIL, password: string = DEMO_PASSWORD): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign In', exact: true }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
}

export interface ApiSession {
  token: string;
  user: { id: number; email: string; name: string; roles: string[]; organization_id: number; superuser: boolean };
}

/** Signs in through the API (no browser), e.g. to prepare data or to create users. */
export async function apiSignIn(request: APIRequestContext, email: string = DEMO_EMAIL, password: string = DEMO_PASSWORD): Promise<ApiSession> {
  const response = await request.post('/api/v1/auth/login', { data: { email, password } });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as ApiSession;
}

/**
 * Puts a session straight into local storage (skips the form), then opens `path`. Useful for tests
 * that are not about signing in.
 */
export async function signInWithSession(page: Page, session: ApiSession, path = '/dashboard'): Promise<void> {
  await page.goto('/privacy-policy');
  await page.evaluate(({ token, user }) => {
    localStorage.setItem('auth_token', token);
    localStorage.setItem('auth_user', JSON.stringify({
      id: user.id, email: user.email, name: user.name, roles: user.roles, organizationId: user.organization_id, superuser: user.superuser,
    }));
  }, session);
  await page.goto(path);
}

/** A unique address for throwaway accounts (signup), so tests never lock or change the demo accounts. */
export function uniqueEmail(prefix = 'e2e'): string {
  return `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

/** Creates a throwaway account through the signup call and returns its session. */
export async function signUp(
  request: APIRequestContext,
  options: { email?: string; password?: string; name?: string; organizationName?: string } = {},
): Promise<ApiSession & { password: string }> {
  const password = options.password ?? 'Throwaway-Pass1!';
  const response = await request.post('/api/v1/auth/signup', {
    data: {
      email: options.email ?? uniqueEmail(), password, name: options.name ?? 'E2E Throwaway',
      ...(options.organizationName ? { organization_name: options.organizationName } : {}),
    },
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
  return { ...((await response.json()) as ApiSession), password };
}

let outboxReader: Promise<ApiSession> | null = null;

/** The dev-outbox messages sent to an address, read as the superuser (the only one who may). */
export async function outboxMessages(request: APIRequestContext, email: string): Promise<{ link: string | null; subject: string }[]> {
  outboxReader ??= apiSignIn(request, SUPERUSER_EMAIL, SUPERUSER_PASSWORD);
  const reader = await outboxReader.catch((error: unknown) => {
    outboxReader = null;
    throw error;
  });
  const response = await request.get(`/api/v1/dev/outbox?email=${encodeURIComponent(email)}`, { headers: { Authorization: `Bearer ${reader.token}` } });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as { link: string | null; subject: string }[];
}
