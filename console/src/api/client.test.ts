import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ApiError, createApiClient, READ_RETRIES } from './client.ts';

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

  describe('a read answered 503 with Retry-After', () => {
    function answering(...answers: Array<[number, string, Record<string, string>?]>) {
      const calls: string[] = [];
      const waits: number[] = [];
      const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
        calls.push(`${init?.method} ${String(input)}`);
        const [status, body, headers] = answers[Math.min(calls.length - 1, answers.length - 1)]!;
        return new Response(body, { status, headers });
      }) as typeof globalThis.fetch;
      const client = createApiClient({ fetch, getToken: () => 'bps_token', onUnauthorized: vi.fn(), sleep: async (ms) => { waits.push(ms); } });
      return { client, calls, waits };
    }
    const busy: [number, string, Record<string, string>] = [503, '{"error":"still being summarised"}', { 'retry-after': '5' }];

    it('asks again after the time it names and answers the later reply', async () => {
      const { client, calls, waits } = answering(busy, busy, [200, '{"points":[]}']);
      await expect(client.get('/api/v1/time-series-data')).resolves.toEqual({ points: [] });
      expect(calls).toHaveLength(3);
      expect(waits).toEqual([5000, 5000]);
    });

    it('gives up after a few tries with the server\'s message', async () => {
      const { client, calls } = answering(busy);
      await expect(client.get('/api/v1/time-series-data')).rejects.toMatchObject({ status: 503, message: 'still being summarised' });
      expect(calls).toHaveLength(1 + READ_RETRIES);
    });

    it('never repeats a change, and takes a 503 without Retry-After as it is', async () => {
      const change = answering(busy);
      await expect(change.client.post('/api/v1/runs', {})).rejects.toMatchObject({ status: 503 });
      expect(change.calls).toHaveLength(1);
      const plain = answering([503, '{"error":"down"}']);
      await expect(plain.client.get('/api/v1/runs')).rejects.toMatchObject({ status: 503 });
      expect(plain.calls).toHaveLength(1);
    });
  });
});
