/**
 * The demo fed-batches come with their off-line samples, drawn from the culture their probes follow:
 * a cell count that tracks the simulated OD at the moment of each draw, glucose flagged below its
 * limit once the feed runs glucose-limited, and titer only after induction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sample } from '@bioprocess/shared/samples';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { seedDemoMetadata, simulatedSeries, type SeedPlan } from '../../src/demo/seed.ts';

describe('demo samples', () => {
  let ctx: TestContext;
  let plan: SeedPlan;
  let token: string;
  const now = Date.now();

  beforeAll(async () => {
    ctx = await createTestContext();
    const seeded = await seedDemoMetadata(ctx.deps, now);
    if (!seeded) throw new Error('expected a fresh seed');
    plan = seeded;
    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'viewer@demo.bioprocess.local', password: 'Demo-Bioprocess1!' } });
    token = login.json().token;
  });
  afterAll(async () => { await ctx?.close(); });

  it('gives every fed-batch three samples a day of VCD, viability, glucose, lactate and titer, consistent with its probes', async () => {
    const fedBatches = plan.unitOperations.filter((operation) => operation.spec.simulate === 'fed-batch');
    const others = plan.unitOperations.filter((operation) => operation.spec.simulate !== 'fed-batch');
    expect(fedBatches.length).toBeGreaterThanOrEqual(6);
    for (const operation of fedBatches) {
      const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${operation.id}/samples`, token });
      const samples = response.json() as Sample[];
      const hours = ((operation.endMs ?? now) - operation.startMs) / 3_600_000;
      expect(samples.length, operation.run.name).toBe(1 + Math.floor(Math.min(hours, 48) / 8));
      const od = simulatedSeries(operation, now).get('opticalDensity')!;
      for (const sample of samples) {
        const analytes = sample.results.map((result) => result.analyte);
        expect(analytes.slice(0, 4)).toEqual(['VCD', 'Viability', 'Glucose', 'Lactate']);
        const drawn = Date.parse(sample.drawn_at);
        // The OD reading just before the draw: cells per mL follow optical density (0.4 g/L per OD unit).
        const reading = od.filter(([ts]) => ts <= drawn).at(-1)![1];
        // Below OD 1 the probe's own noise is as large as the comparison's margin.
        if (reading < 1) continue;
        const vcd = sample.results.find((result) => result.analyte === 'VCD')!.value;
        const viability = sample.results.find((result) => result.analyte === 'Viability')!.value;
        expect(vcd / (reading * 0.4 * 3.3 * (viability / 100))).toBeGreaterThan(0.85);
        expect(vcd / (reading * 0.4 * 3.3 * (viability / 100))).toBeLessThan(1.15);
      }
      const afterFeedStart = samples.filter((sample) => Date.parse(sample.drawn_at) - operation.startMs > 12 * 3_600_000);
      expect(afterFeedStart.every((sample) => sample.results.find((result) => result.analyte === 'Glucose')!.flag === 'below_limit')).toBe(true);
      const firstTiter = samples[0]!.results.find((result) => result.analyte === 'Titer');
      expect(firstTiter).toMatchObject({ flag: 'below_limit', value: 0.01, method: 'HPLC SEC' });
    }
    for (const operation of others) {
      const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${operation.id}/samples`, token });
      expect(response.json()).toEqual([]);
    }
  });
});
