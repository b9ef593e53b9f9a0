import { describe, expect, it } from 'vitest';
import { AUDIT_RETRY, auditRetryDelayMs } from '@bioprocess/shared/auth-contracts';

describe('audit retry delay', () => {
  it('doubles from one second and never exceeds a minute', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(auditRetryDelayMs)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000]);
    expect(auditRetryDelayMs(10_000)).toBe(AUDIT_RETRY.maxDelayMs);
  });

  it('keeps retrying through an outage of several weeks', () => {
    const minimumSpanDays = ((AUDIT_RETRY.attempts - 10) * AUDIT_RETRY.maxDelayMs) / 86_400_000;
    expect(minimumSpanDays).toBeGreaterThan(30);
  });
});
