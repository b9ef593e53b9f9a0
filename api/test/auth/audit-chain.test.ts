/**
 * The tamper-evident audit trail against the real services: entries linked by the real audit-worker
 * (several at once, and one killed with -9), tampering done directly in PostgreSQL (an edited, a
 * deleted, a swapped row, a chain rewritten with recomputed hashes), each found by
 * GET /api/v1/audit/verification with the right kind, and the same export verified offline against a
 * downloaded checkpoint.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { csvRow } from '@bioprocess/shared/csv/write';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { entryHash, loadCheckpointKey, type ChainedEntryContent, type SignedCheckpoint } from '@bioprocess/shared/audit-chain';
import { checkpointChains, startAuditWorker, verifyExport, type AuditWorkerHandle } from '@bioprocess/audit-worker';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { outboxCount, waitFor } from '../support/audit-drain.ts';
import { children, killHard, spawnProcess, stopGently } from '../support/pipeline.ts';
import { REPO_ROOT } from '../support/ingest.ts';
import { recordAudit } from '../../src/audit/record.ts';

const CHECKPOINT_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('tamper-evident audit trail', () => {
  let ctx: TestContext;
  const workers: AuditWorkerHandle[] = [];

  const startWorker = (every = 5) => {
    const worker = startAuditWorker({ ...ctx.env, WORKER_CONCURRENCY: 3, AUDIT_CHECKPOINT_KEY: CHECKPOINT_KEY, AUDIT_CHECKPOINT_EVERY: every }, ctx.deps.logger);
    workers.push(worker);
    return worker;
  };

  /** Records `count` events for the organisation (through the outbox, as the api does). */
  const record = async (organizationId: number, count: number, label = 'test.chained') => {
    for (let index = 0; index < count; index += 1) {
      await recordAudit(ctx.deps.pg, null, {
        event_type: label, action: 'update', resource_type: 'run', resource_id: index, organization_id: organizationId,
        user_email: index % 3 === 0 ? '=cmd|calc' : `user${index}@example.test`,
        changes: { before: { name: `n${index}`, 10: 'ten', 2: 'two' }, after: { name: `n${index + 1}`, note: 'ünïcødé, "quoted"\nline' } },
      });
    }
  };
  const drained = () => waitFor(async () => (await outboxCount(ctx)) === 0, 'the audit outbox to empty', 60_000);

  const organizationWith = async (count: number): Promise<{ id: number; admin: TestUser }> => {
    const id = await ctx.createOrganization();
    const admin = await ctx.createUser({ organizationId: id, role: 'admin' });
    await record(id, count);
    await drained();
    return { id, admin };
  };

  const verification = async (admin: TestUser) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/audit/verification', token: admin.token });
    expect(response.statusCode).toBe(200);
    return response.json();
  };

  /** A session where the append-only trigger does not fire: what an attacker with the database's owner rights can do. */
  const tamper = async (sql: string | string[], params: unknown[]) => {
    const client: pg.PoolClient = await ctx.deps.pg.connect();
    try {
      await client.query('BEGIN');
      await client.query("SET LOCAL session_replication_role = 'replica'");
      for (const statement of [sql].flat()) await client.query(statement, params);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    startWorker();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.close()));
    await ctx.close();
  });

  it('links every entry once, in one unbroken chain per organisation, with several audit-workers at once', async () => {
    startWorker();
    const first = await ctx.createOrganization();
    const second = await ctx.createOrganization();
    const [adminFirst, adminSecond] = await Promise.all([ctx.createUser({ organizationId: first }), ctx.createUser({ organizationId: second })]);
    await Promise.all([record(first, 40), record(second, 25)]);
    await drained();

    const { rows } = await ctx.deps.pg.query(
      `SELECT organization_id, count(*)::int AS n, min(chain_seq)::int AS lo, max(chain_seq)::int AS hi, count(DISTINCT chain_seq)::int AS distinct_seqs
         FROM audit_logs WHERE organization_id = ANY($1::bigint[]) GROUP BY organization_id ORDER BY organization_id`,
      [[first, second]],
    );
    expect(rows).toEqual([
      { organization_id: first, n: 40, lo: 1, hi: 40, distinct_seqs: 40 },
      { organization_id: second, n: 25, lo: 1, hi: 25, distinct_seqs: 25 },
    ]);
    const verified = await verification(adminFirst);
    expect(verified).toMatchObject({ valid: true, entries: 40, last_seq: 40, broken: null });
    // Checkpointed every 5 entries.
    expect(verified.checkpoints_checked).toBe(8);
    expect((await verification(adminSecond)).valid).toBe(true);
  });

  it('finds an edited entry', async () => {
    const { id, admin } = await organizationWith(8);
    await tamper(`UPDATE audit_logs SET changes = jsonb_set(changes, '{after,name}', '"forged"') WHERE organization_id = $1 AND chain_seq = 4`, [id]);
    expect((await verification(admin)).broken).toMatchObject({ kind: 'edited', chain_seq: 4 });
  });

  it('finds a removed entry', async () => {
    const { id, admin } = await organizationWith(8);
    await tamper('DELETE FROM audit_logs WHERE organization_id = $1 AND chain_seq = 5', [id]);
    expect((await verification(admin)).broken).toMatchObject({ kind: 'removed', chain_seq: 5 });
  });

  it('finds a removed last entry (the chain still ends cleanly)', async () => {
    const { id, admin } = await organizationWith(7);
    await tamper('DELETE FROM audit_logs WHERE organization_id = $1 AND chain_seq = 7', [id]);
    expect((await verification(admin)).broken).toMatchObject({ kind: 'removed', chain_seq: 7 });
  });

  it('finds two swapped entries', async () => {
    const { id, admin } = await organizationWith(8);
    await tamper([
      'UPDATE audit_logs SET chain_seq = -3 WHERE organization_id = $1 AND chain_seq = 3',
      'UPDATE audit_logs SET chain_seq = 3 WHERE organization_id = $1 AND chain_seq = 6',
      'UPDATE audit_logs SET chain_seq = 6 WHERE organization_id = $1 AND chain_seq = -3',
    ], [id]);
    expect((await verification(admin)).broken).toMatchObject({ kind: 'reordered', chain_seq: 3 });
  });

  it('finds a row inserted without a link', async () => {
    const { id, admin } = await organizationWith(3);
    await ctx.deps.pg.query(
      `INSERT INTO audit_logs (event_id, event_type, action, success, organization_id, created_at) VALUES (gen_random_uuid(), 'forged', 'create', true, $1, now())`,
      [id],
    );
    expect((await verification(admin)).broken).toMatchObject({ kind: 'inserted' });
  });

  it('finds a chain rewritten with recomputed hashes by its signed checkpoint', async () => {
    const { id, admin } = await organizationWith(10);
    // Remove entry 2 and rebuild every later link and the head, as someone who knows the algorithm would.
    await tamper('DELETE FROM audit_logs WHERE organization_id = $1 AND chain_seq = 2', [id]);
    const { rows } = await ctx.deps.pg.query<ChainedEntryContent & { id: number; chain_seq: number; prev_hash: string }>(
      `SELECT id, event_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, event_type, action,
              resource_type, resource_id, success, user_id, user_email, organization_id, ip, changes, change_reason, change_reason_code,
              change_seq, chain_seq, prev_hash
         FROM audit_logs WHERE organization_id = $1 ORDER BY chain_seq`,
      [id],
    );
    let prev = rows[0]!.prev_hash;
    let seq = 0;
    for (const row of rows) {
      seq += 1;
      const hash = entryHash(row, prev);
      await tamper('UPDATE audit_logs SET chain_seq = $2, prev_hash = $3, entry_hash = $4 WHERE id = $1', [row.id, -seq, prev, hash]);
      prev = hash;
    }
    await tamper('UPDATE audit_logs SET chain_seq = -chain_seq WHERE organization_id = $1', [id]);
    await tamper('UPDATE audit_chain_heads SET last_seq = $2, last_hash = $3 WHERE chain_key = $1', [id, seq, prev]);
    const verified = await verification(admin);
    expect(verified.valid).toBe(false);
    expect(verified.broken.kind).toMatch(/edited|removed/);
    expect(verified.broken.detail).toMatch(/checkpoint/);
  });

  it('links entries that predate the chain first, in their order', async () => {
    const id = await ctx.createOrganization();
    const admin = await ctx.createUser({ organizationId: id });
    await ctx.deps.pg.query(
      `INSERT INTO audit_logs (event_id, event_type, action, success, organization_id, created_at, changes)
       SELECT gen_random_uuid(), 'legacy', 'create', true, $1, now() - make_interval(secs => 1000 - g), jsonb_build_object('n', g)
         FROM generate_series(1, 30) AS g`,
      [id],
    );
    // As if these rows had been there when the migration ran.
    await ctx.deps.pg.query('UPDATE audit_chain_legacy SET max_id = (SELECT max(id) FROM audit_logs)');
    await record(id, 2);
    await drained();
    const { rows } = await ctx.deps.pg.query(`SELECT event_type, changes->>'n' AS n FROM audit_logs WHERE organization_id = $1 ORDER BY chain_seq`, [id]);
    expect(rows.map((row) => row.n ?? row.event_type)).toEqual([...Array.from({ length: 30 }, (_, index) => String(index + 1)), 'test.chained', 'test.chained']);
    expect(await verification(admin)).toMatchObject({ valid: true, entries: 32 });
  });

  it('keeps the chain whole when an audit-worker is killed with -9 while it links', async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.close()));
    const { id, admin } = await organizationWith(0);
    await record(id, 300);
    const entry = path.join(REPO_ROOT, 'audit-worker/src/main.ts');
    const env = { WORKER_CONCURRENCY: '4', AUDIT_CHECKPOINT_KEY: CHECKPOINT_KEY, AUDIT_CHECKPOINT_EVERY: '7', AUDIT_LOCK_MS: '2000' };
    const doomed = spawnProcess(ctx, entry, env);
    const other = spawnProcess(ctx, entry, env);
    await waitFor(async () => (await outboxCount(ctx)) < 250, 'the workers to store some events', 60_000);
    await killHard(doomed);
    const remaining = await outboxCount(ctx);
    expect(remaining).toBeGreaterThan(0);
    const successor = spawnProcess(ctx, entry, env);
    await drained();
    await Promise.all([stopGently(other), stopGently(successor)]);
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS events FROM audit_logs WHERE organization_id = $1', [id]);
    expect(rows[0]).toEqual({ n: 300, events: 300 });
    expect(await verification(admin)).toMatchObject({ valid: true, entries: 300, last_seq: 300 });
  });

  describe('offline verification of the export', () => {
    let exported: string;
    let checkpoint: SignedCheckpoint;
    let organizationId: number;

    beforeAll(async () => {
      // The kill test closed the in-process workers.
      if (workers.length === 0) startWorker();
      const { id, admin } = await organizationWith(12);
      organizationId = id;
      // The periodic pass, now: it signs every chain that grew since its last checkpoint.
      await checkpointChains(ctx.deps.pg, loadCheckpointKey(CHECKPOINT_KEY));
      exported = (await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=csv', token: admin.token })).body;
      const list = (await ctx.request({ method: 'GET', url: '/api/v1/audit/checkpoints', token: admin.token })).json();
      expect(list[0]).toMatchObject({ organization_id: id, chain_seq: 12 });
      const download = await ctx.request({ method: 'GET', url: `/api/v1/audit/checkpoints/${list[0].id}`, token: admin.token });
      expect(download.headers['content-disposition']).toMatch(/^attachment; filename="audit-checkpoint-/);
      checkpoint = download.json();
      // Another organisation's admin cannot fetch it.
      const stranger = await ctx.createUser({ organizationId: await ctx.createOrganization() });
      expect((await ctx.request({ method: 'GET', url: `/api/v1/audit/checkpoints/${list[0].id}`, token: stranger.token })).statusCode).toBe(404);
    });

    /** The export as cells, and back (the product's own CSV writer, which keeps what it reads unchanged). */
    const table = () => parse(exported) as string[][];
    const csv = (rows: string[][]) => rows.map((row) => csvRow(row)).join('');
    const check = (text: string, withCheckpoint: SignedCheckpoint | null = checkpoint) =>
      verifyExport(Readable.from([text]), withCheckpoint);

    it('passes an untouched export against its checkpoint', async () => {
      expect(csv(table())).toBe(exported);
      const result = await check(exported);
      expect(result).toMatchObject({ valid: true, checkpoint: { signature_valid: true, reached: true } });
      // The export's own audit event may be in it or not, depending on when the worker stored it.
      expect(result.organizations.find((organization) => organization.organization_id === organizationId)!.last_seq).toBeGreaterThanOrEqual(12);
    });

    it('finds an edited, a removed and a reordered entry, and a cut-off end', async () => {
      const [header, ...rows] = table();
      const column = (name: string) => header!.indexOf(name);
      const seqOf = (row: string[]) => Number(row[column('chain_seq')]);
      const bySeq = (seq: number) => rows.findIndex((row) => seqOf(row) === seq);

      const edited = rows.map((row) => [...row]);
      edited[bySeq(6)]![column('action')] = 'delete';
      expect((await check(csv([header!, ...edited]))).organizations[0]!.broken).toMatchObject({ kind: 'edited', chain_seq: 6 });

      const removed = rows.filter((_, index) => index !== bySeq(7));
      expect((await check(csv([header!, ...removed]))).organizations[0]!.broken).toMatchObject({ kind: 'removed', chain_seq: 7 });

      // Two entries trade places in the chain, as a swap in the database would export.
      const swapped = rows.map((row) => [...row]);
      swapped[bySeq(4)]![column('chain_seq')] = '9';
      swapped[bySeq(9)]![column('chain_seq')] = '4';
      expect((await check(csv([header!, ...swapped]))).organizations[0]!.broken).toMatchObject({ kind: 'reordered', chain_seq: 4 });

      const truncated = rows.filter((row) => seqOf(row) <= 10);
      expect((await check(csv([header!, ...truncated]))).organizations[0]!.broken).toMatchObject({ kind: 'removed', chain_seq: 11 });

      const duplicated = [...rows, rows[bySeq(3)]!];
      expect((await check(csv([header!, ...duplicated]))).organizations[0]!.broken).toMatchObject({ kind: 'inserted', chain_seq: 3 });
    });

    it('refuses a checkpoint whose digest was changed', async () => {
      const forged = { ...checkpoint, chain_seq: checkpoint.chain_seq - 1 };
      const result = await check(exported, forged);
      expect(result.valid).toBe(false);
      expect(result.checkpoint!.signature_valid).toBe(false);
    });
  });
});
