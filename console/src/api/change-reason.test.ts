import { afterEach, describe, expect, it, vi } from 'vitest';
import { changeReasonHeaders, changeReasonKindOfRequest } from '@bioprocess/shared/change-reasons';
import { createApiClient } from './client.ts';
import { ChangeReasonCancelled, changeReasonHeadersFor, setChangeReasonPrompt } from './change-reason.ts';

vi.mock('../auth/session-store.ts', () => ({ getToken: () => 'bps_token', clearSession: () => undefined }));

function settingsFetch(policy: string) {
  return vi.fn(async () => new Response(JSON.stringify({
    policies: { runs: policy, unit_operations: 'off', samples: 'off', time_series: 'off', derived_parameters: 'off', golden_batches: 'off' },
    reasons: ['Correction'],
  }), { status: 200 }));
}

afterEach(() => {
  setChangeReasonPrompt(null);
  vi.unstubAllGlobals();
});

describe('reason for change in the console', () => {
  it('knows the record kind of a concrete request', () => {
    expect(changeReasonKindOfRequest('PUT', '/api/v1/runs/12')).toBe('runs');
    expect(changeReasonKindOfRequest('DELETE', '/api/v1/time-series-data?instrument_id=3&start=1')).toBe('time_series');
    expect(changeReasonKindOfRequest('POST', '/api/v1/unit-operations/4/csv-uploads')).toBe('time_series');
    expect(changeReasonKindOfRequest('POST', '/api/v1/runs')).toBeNull();
    expect(changeReasonKindOfRequest('PUT', '/api/v1/facilities/2')).toBeNull();
  });

  it('percent-encodes the reason into the two headers', () => {
    expect(changeReasonHeaders({ text: 'Réf. 12 — corrigé', code: 'Correction' })).toEqual({
      'X-Change-Reason': encodeURIComponent('Réf. 12 — corrigé'), 'X-Change-Reason-Code': 'Correction',
    });
    expect(changeReasonHeaders(null)).toEqual({});
  });

  it('asks only where the organisation wants a reason, and the client sends what was given', async () => {
    const prompt = vi.fn(async () => ({ text: 'Typo in the name', code: 'Correction' }));
    setChangeReasonPrompt(prompt);
    vi.stubGlobal('fetch', settingsFetch('off'));
    expect(await changeReasonHeadersFor('PUT', '/api/v1/runs/1')).toEqual({});
    expect(prompt).not.toHaveBeenCalled();

    vi.stubGlobal('fetch', settingsFetch('required'));
    const calls: RequestInit[] = [];
    const client = createApiClient({
      fetch: (async (_input: RequestInfo | URL, init?: RequestInit) => { calls.push(init!); return new Response('{}', { status: 200 }); }) as typeof fetch,
      getToken: () => 'bps_token', onUnauthorized: () => undefined, changeHeaders: changeReasonHeadersFor,
    });
    await client.put('/api/v1/runs/1', { name: 'x' });
    expect(prompt).toHaveBeenCalledWith({ kind: 'runs', required: true, reasons: ['Correction'], method: 'PUT' });
    expect(calls[0]!.headers).toMatchObject({ 'X-Change-Reason': 'Typo%20in%20the%20name', 'X-Change-Reason-Code': 'Correction' });
    await client.get('/api/v1/runs/1');
    expect(prompt).toHaveBeenCalledTimes(1);
  });

  it('asks once for the changes one save sends together, and again for the next save', async () => {
    const prompt = vi.fn(async () => ({ text: 'Batch record corrected', code: null }));
    setChangeReasonPrompt(prompt);
    vi.stubGlobal('fetch', settingsFetch('required'));
    const together = await Promise.all([changeReasonHeadersFor('PUT', '/api/v1/runs/1'), changeReasonHeadersFor('PUT', '/api/v1/runs/1')]);
    expect(prompt).toHaveBeenCalledTimes(1);
    expect(together[0]).toEqual(together[1]);
    await changeReasonHeadersFor('PUT', '/api/v1/runs/1');
    expect(prompt).toHaveBeenCalledTimes(2);
  });

  it('does not send a change the person cancelled', async () => {
    setChangeReasonPrompt(async () => { throw new ChangeReasonCancelled(); });
    vi.stubGlobal('fetch', settingsFetch('optional'));
    const send = vi.fn();
    const client = createApiClient({ fetch: send as unknown as typeof fetch, getToken: () => 'bps_token', onUnauthorized: () => undefined, changeHeaders: changeReasonHeadersFor });
    await expect(client.del('/api/v1/runs/1')).rejects.toThrow(/no reason for change was given/);
    expect(send).not.toHaveBeenCalled();
  });
});
