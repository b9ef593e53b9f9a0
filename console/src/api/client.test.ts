import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ApiError, createApiClient } from './client.ts';

type FetchCall = [input: RequestInfo | URL, init?: RequestInit];

function fakeFetch(status: number, body: string | null, statusText = '') {
  const calls: FetchCall[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push([input, init]);
    return new Response(body, { status, statusText });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

function clientWith(status: number, body: string | null, options: { token?: string | null; statusText?: string } = {}) {
  const { fetch, calls } = fakeFetch(status, body, options.statusText);
  const onUnauthorized = vi.fn();
  const client = createApiClient({ fetch, getToken: () => (options.token === undefined ? 'bps_token' : options.token), onUnauthorized });
  return { client, calls, onUnauthorized };
}

describe('api client', () => {
  it('sends the bearer token and a JSON body as given, on a relative path', async () => {
    const { client, calls } = clientWith(200, '{"id":1}');
    await client.post('/api/v1/runs', { start_time: 'x' });
    const [url, init] = calls[0]!;
    expect(url).toBe('/api/v1/runs');
    expect(init?.method).toBe('POST');
    expect((init?.headers as Record<string, string>).Authorization).toBe('Bearer bps_token');
    expect((init?.headers as Record<string, string>)['Content-Type']).toBe('application/json');
    expect(init?.body).toBe('{"start_time":"x"}');
  });

  it('converts response keys to camelCase recursively', async () => {
    const { client } = clientWith(200, '[{"run_id":1,"unit_operations":[{"equipment_id":2}]}]');
    await expect(client.get('/api/v1/runs')).resolves.toEqual([{ runId: 1, unitOperations: [{ equipmentId: 2 }] }]);
  });

  it('answers null for 204, empty and non-JSON bodies', async () => {
    await expect(clientWith(204, null).client.del('/api/v1/runs/1')).resolves.toBeNull();
    await expect(clientWith(200, '').client.get('/x')).resolves.toBeNull();
    await expect(clientWith(200, '<html>ok</html>').client.get('/x')).resolves.toBeNull();
  });

  it("throws 'No access token available' without calling the server when there is no token", async () => {
    const { client, calls } = clientWith(200, '{}', { token: null });
    await expect(client.get('/api/v1/runs')).rejects.toThrow('No access token available');
    expect(calls).toHaveLength(0);
  });

  it("signs out and throws 'Authentication required' on 401", async () => {
    const { client, onUnauthorized } = clientWith(401, '{"error":"Session expired"}');
    const failure = client.get('/api/v1/runs');
    await expect(failure).rejects.toThrow('Authentication required');
    await expect(failure).rejects.toMatchObject({ status: 401 });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    // The server's reason goes along, so the sign-in page can say why the session ended.
    expect(onUnauthorized).toHaveBeenCalledWith('Session expired');
  });

  it("passes the server's error text through", async () => {
    const { client, onUnauthorized } = clientWith(400, '{"error":"Please provide a valid email address"}');
    const failure = client.post('/api/v1/users', {});
    await expect(failure).rejects.toThrow('Please provide a valid email address');
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 400 });
    expect(onUnauthorized).not.toHaveBeenCalled();
  });

  it("falls back to 'API request failed: {status text}' without a server error", async () => {
    await expect(clientWith(500, 'oops', { statusText: 'Internal Server Error' }).client.get('/x'))
      .rejects.toThrow('API request failed: Internal Server Error');
    await expect(clientWith(404, '{"message":"nope"}', { statusText: 'Not Found' }).client.get('/x'))
      .rejects.toThrow('API request failed: Not Found');
  });

  it('validates the wire body with the schema before converting keys', async () => {
    const instrument = z.object({ id: z.number(), equipment_id: z.number(), name: z.string(), alias: z.string().nullish().default(null) });
    const ok = clientWith(200, '{"id":1,"equipment_id":2,"name":"pH probe"}');
    await expect(ok.client.get('/api/v1/instruments/1', { schema: instrument })).resolves.toEqual({ id: 1, equipmentId: 2, name: 'pH probe', alias: null });
    const bad = clientWith(200, '{"id":"1","equipment_id":2,"name":"pH probe"}');
    await expect(bad.client.get('/api/v1/instruments/1', { schema: instrument })).rejects.toBeInstanceOf(z.ZodError);
  });
});
