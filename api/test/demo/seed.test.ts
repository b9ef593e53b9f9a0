import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATASETS_DIR, seedDemoMetadata, seedDemoTimeSeries, type SeedPlan } from '../../src/demo/seed.ts';
import { DEMO_ORGANISATION_NAME, demoRuns } from '../../src/demo/demo-organisation.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
import type { IngestWorker } from '@bioprocess/ingest-worker';

async function waitForIngestJobs(ctx: TestContext, organizationId: number): Promise<Array<{ state: string; error: string | null }>> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const { rows } = await ctx.deps.pg.query('SELECT state, error FROM ingest_jobs WHERE organization_id = $1', [organizationId]);
    if (rows.length > 0 && rows.every((row) => row.state === 'completed' || row.state === 'failed')) return rows;
    if (Date.now() > deadline) throw new Error('demo ingest jobs did not finish');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('demo organisation seed', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plan: SeedPlan;

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    const seeded = await seedDemoMetadata(ctx.deps);
    if (!seeded) throw new Error('expected a fresh seed');
    plan = seeded;
    await seedDemoTimeSeries(ctx.app, ctx.deps, plan);
  });
  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  it('creates a lab with runs in every state and signs in its admin, editor and viewer', async () => {
    for (const email of ['scientist@demo.bioprocess.local', 'editor@demo.bioprocess.local', 'viewer@demo.bioprocess.local']) {
      const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'Demo-Bioprocess1!' } });
      expect(login.statusCode).toBe(200);
    }
    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'scientist@demo.bioprocess.local', password: 'Demo-Bioprocess1!' } });
    const runs = (await ctx.request({ method: 'GET', url: '/api/v1/runs', token: login.json().token })).json() as Array<{ status: string }>;
    expect(runs).toHaveLength(12);
    expect(new Set(runs.map((run) => run.status))).toEqual(new Set(['Pending', 'Active', 'Completed']));
  });

  it('loads every series through the ingestion path, real datasets included', async () => {
    const jobs = await waitForIngestJobs(ctx, plan.organizationId);
    expect(jobs.filter((job) => job.state === 'failed')).toEqual([]);
    const countFor = async (equipment: string, instrument: string) => {
      const id = plan.instruments.get(equipment)!.get(instrument)!;
      const result = await ctx.deps.clickhouse.query({
        query: `SELECT count() AS n FROM (SELECT ts, argMax(is_deleted, version) AS deleted FROM points WHERE organization_id = ${plan.organizationId} AND instrument_id = ${id} GROUP BY ts) WHERE deleted = 0`,
        format: 'JSONEachRow',
      });
      return Number((await result.json<{ n: string }>())[0]!.n);
    };
    expect(await countFor('pio', 'od')).toBe(10_944);
    expect(await countFor('chibio', 'od')).toBe(15_473);
    expect(await countFor('dasware', 'temperature')).toBeGreaterThan(100);
    // Six completed fed-batches of 40/40/38/36/40/40 h at one reading a minute, plus the running one.
    expect(await countFor('br1', 'temperature')).toBeGreaterThan((40 + 40 + 38 + 36 + 40 + 40) * 60);
  });

  it('has a golden batch over the good fed-batches that ranks the feed-fault run\'s feed rate worst', async () => {
    await waitForIngestJobs(ctx, plan.organizationId);
    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'viewer@demo.bioprocess.local', password: 'Demo-Bioprocess1!' } });
    const token = login.json().token as string;
    const [batch] = (await ctx.request({ method: 'GET', url: '/api/v1/golden-batches', token })).json() as Array<{ id: number; reference_unit_operation_ids: number[] }>;
    expect(batch!.reference_unit_operation_ids).toHaveLength(5);
    const faulty = plan.unitOperations.find((operation) => operation.spec.feedFault)!;
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token, payload: { golden_batch_id: batch!.id, target_unit_operation_ids: [faulty.id] },
    });
    expect(response.statusCode, response.body).toBe(200);
    const ranking = response.json().ranking as Array<{ parameter: string; share_outside: number }>;
    expect(ranking[0]!.parameter, JSON.stringify(ranking)).toBe('feed_rate');
    expect(ranking[0]!.share_outside).toBeGreaterThan(0.8);
  });

  it('draws OUR, CER, RQ and the growth rate of its fed-batches out of the box', async () => {
    await waitForIngestJobs(ctx, plan.organizationId);
    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'viewer@demo.bioprocess.local', password: 'Demo-Bioprocess1!' } });
    const token = login.json().token as string;
    const library = (await ctx.request({ method: 'GET', url: '/api/v1/derived-parameters', token })).json() as Array<{ id: number; library_key: string }>;
    const good = plan.unitOperations.find((operation) => operation.spec.simulate === 'fed-batch' && !operation.spec.feedFault && operation.endMs !== null)!;
    const values = async (key: string) => {
      const id = library.find((entry) => entry.library_key === key)!.id;
      const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${good.id}/derived/${id}`, token });
      expect(response.statusCode, response.body).toBe(200);
      return (response.json().points as Array<{ value: number | null }>).map((point) => point.value).filter((value): value is number => value !== null);
    };
    const our = await values('our');
    expect(our.length).toBeGreaterThan(1_000);
    // A fed-batch at tens of g/L of biomass takes up tens to a few hundred mmol O2 per litre and hour.
    expect(Math.max(...our)).toBeGreaterThan(30);
    expect(Math.max(...our)).toBeLessThan(400);
    const rq = (await values('rq')).filter((_, index) => our[index]! > 20);
    const median = [...rq].sort((a, b) => a - b)[Math.floor(rq.length / 2)]!;
    expect(median).toBeGreaterThan(0.95);
    expect(median).toBeLessThan(1.15);
    expect(Math.max(...(await values('specific_growth_rate')))).toBeGreaterThan(0.1);
    expect((await values('cumulative_feed')).at(-1)).toBeGreaterThan(0);
  });

  it('reads its datasets from the repository, each with its source and licence, so a fresh clone seeds them', () => {
    expect(path.relative(REPO_ROOT, DATASETS_DIR).startsWith('..')).toBe(false);
    const sources = readFileSync(path.join(DATASETS_DIR, 'SOURCES.md'), 'utf8');
    const files = demoRuns().flatMap((run) => (run.dataset ? [run.dataset.file] : []));
    expect(files).toHaveLength(3);
    for (const file of files) {
      expect(existsSync(path.join(DATASETS_DIR, file)), file).toBe(true);
      expect(sources).toMatch(new RegExp(`\\| \`${file.replace(/[.()]/g, '\\$&')}\` \\|[^\n]*\\| (MIT|GPL-3\\.0) \\|`));
    }
  });

  it('is idempotent: a second seed leaves the organisation as it is', async () => {
    expect(await seedDemoMetadata(ctx.deps)).toBeNull();
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM organizations WHERE name = $1', [DEMO_ORGANISATION_NAME]);
    expect(rows[0].n).toBe(1);
  });
});
