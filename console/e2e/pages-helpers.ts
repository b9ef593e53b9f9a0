/**
 * Fixtures of the page tests (dashboard, runs, run detail, data management, settings): users of each
 * role made through the invitation flow, and a small run with unit operations and readings made
 * through the API, so the tests never depend on what the demo seed holds.
 */
import { expect, type APIRequestContext, type APIResponse, type Page } from '@playwright/test';
import { apiSignIn, DEMO_EMAIL, DEMO_PASSWORD, outboxMessages, signUp, uniqueEmail, type ApiSession } from './support/auth.ts';

/**
 * The demo organisation's admin; when the demo seed is not there (a stack started without it), a
 * fresh organisation from the signup call, whose creator is its admin.
 */
export async function adminSession(request: APIRequestContext): Promise<ApiSession> {
  const login = await request.post('/api/v1/auth/login', { data: { email: DEMO_EMAIL, password: DEMO_PASSWORD } });
  if (login.ok()) return (await login.json()) as ApiSession;
  return signUp(request, { name: 'Pages Admin' });
}

export type Role = 'viewer' | 'editor' | 'admin';

export async function call(request: APIRequestContext, token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown): Promise<APIResponse> {
  return request.fetch(path, { method, data, headers: { Authorization: `Bearer ${token}` } });
}

export async function callJson<T>(request: APIRequestContext, token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, data?: unknown): Promise<T> {
  const response = await call(request, token, method, path, data);
  expect(response.ok(), `${method} ${path}: ${response.status()} ${await response.text()}`).toBeTruthy();
  return (await response.json()) as T;
}

const USER_PASSWORD = 'Pages-Role-Pass1!';

/** The invitation link last mailed to the address, read from the dev outbox. */
export async function invitationToken(request: APIRequestContext, email: string): Promise<string> {
  const messages = await outboxMessages(request, email);
  const link = messages.find((message) => message.link?.includes('/accept-invitation'))?.link;
  expect(link, 'invitation link in the dev outbox').toBeTruthy();
  return new URL(link!, 'http://localhost').searchParams.get('token')!;
}

/** Invites the address with the role into the inviter's (current) organisation and accepts through the mailed link. */
export async function inviteAndAccept(request: APIRequestContext, inviterToken: string, email: string, role: Role, name: string): Promise<ApiSession> {
  await callJson(request, inviterToken, 'POST', '/api/v1/auth/users/invite', { email, roleName: role });
  const accepted = await request.post('/api/v1/auth/invitations/accept', { data: { token: await invitationToken(request, email), name, password: USER_PASSWORD } });
  expect(accepted.status(), await accepted.text()).toBe(201);
  return (await accepted.json()) as ApiSession;
}

/** A user with the role in the admin's organisation, made through the invitation flow. */
export async function createUserWithRole(request: APIRequestContext, admin: ApiSession, role: Role): Promise<ApiSession> {
  const email = uniqueEmail(`pages-${role}`);
  await inviteAndAccept(request, admin.token, email, role, `Pages ${role[0]!.toUpperCase()}${role.slice(1)}`);
  return apiSignIn(request, email, USER_PASSWORD);
}

export interface RunFixture {
  stamp: string;
  facility: { id: number; name: string };
  equipment: { id: number; name: string };
  run: { id: number; name: string };
  otherRun: { id: number; name: string };
  unitOperations: { id: number; type: string }[];
}

/**
 * A facility, a bioreactor with titer and yield instruments, a completed run (fermentation then
 * centrifugation, readings with max titer 12.5 g/L and yields averaging 80 %), and a second, pending run.
 */
export async function createRunFixture(request: APIRequestContext, session: ApiSession): Promise<RunFixture> {
  const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
  const token = session.token;
  const facility = await callJson<{ id: number; name: string }>(request, token, 'POST', '/api/v1/facilities', { name: `Pages Facility ${stamp}`, type: 'pilot plant', country: 'NL' });
  const equipment = await callJson<{ id: number; name: string }>(request, token, 'POST', '/api/v1/equipment', { name: `Pages Bioreactor ${stamp}`, type: 'bioreactor', oem: 'Sartorius', facility_id: facility.id });
  const start = new Date(Date.UTC(2025, 2, 3, 8, 0));
  const end = new Date(Date.UTC(2025, 2, 5, 8, 0));
  const run = await callJson<{ id: number; name: string }>(request, token, 'POST', '/api/v1/runs', {
    facility_id: facility.id, name: `Pages Run ${stamp}`, target: 'GFP', strain: `Strain-${stamp}`, description: 'A fed-batch made by the page tests.',
    start_time: start.toISOString(), end_time: end.toISOString(), scale_liters: 2, scale_grams: 10,
  });
  const otherRun = await callJson<{ id: number; name: string }>(request, token, 'POST', '/api/v1/runs', {
    facility_id: facility.id, name: `Pages Pending ${stamp}`, target: 'HSA', strain: `Strain-${stamp}`, scale_liters: 50,
  });
  const fermentation = await callJson<{ id: number; type: string }>(request, token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: start.toISOString(), end_time: new Date(Date.UTC(2025, 2, 4, 20, 0)).toISOString(),
  });
  const centrifugation = await callJson<{ id: number; type: string }>(request, token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'centrifugation', equipment_id: equipment.id, start_time: new Date(Date.UTC(2025, 2, 4, 21, 0)).toISOString(),
  });
  const titer = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', { name: `Titer ${stamp}`, type: 'titer', unit: 'g/L', equipment_id: equipment.id });
  const yieldA = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', { name: `Yield A ${stamp}`, type: 'yield', unit: '%', equipment_id: equipment.id });
  const yieldB = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', { name: `Yield B ${stamp}`, type: 'yield', unit: '%', equipment_id: equipment.id });
  const at = (hours: number) => new Date(start.getTime() + hours * 3_600_000).toISOString();
  const points = [
    ...[2.5, 8.0, 12.5, 11.0].map((value, index) => ({ measured_at: at(index * 6 + 1), instrument_id: titer.id, float_value: value })),
    // Yield A averages 70 %, yield B 90 %: the mean of the means is 80 %.
    ...[60, 80].map((value, index) => ({ measured_at: at(index * 6 + 1), instrument_id: yieldA.id, float_value: value })),
    ...[90].map((value) => ({ measured_at: at(3), instrument_id: yieldB.id, float_value: value })),
  ];
  const bulk = await call(request, token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points });
  expect(bulk.status(), await bulk.text()).toBeLessThan(300);
  return { stamp, facility, equipment, run, otherRun, unitOperations: [fermentation, centrifugation] };
}

export async function screenshot(page: Page, name: string, testInfo: { outputPath: (...parts: string[]) => string }): Promise<void> {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}
