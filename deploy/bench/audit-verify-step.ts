/**
 * The offline audit verifier over a million-entry chain: a synthetic export (audit-worker's
 * synthetic-chain.ts) verified against its checkpoint by the same code as `npm run audit:verify`.
 * Target: under a minute.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeSyntheticExport } from '../../audit-worker/src/synthetic-chain.ts';
import { verifyExport } from '../../audit-worker/src/verify-export.ts';

export async function benchAuditVerify(entries: number, log: (message: string) => void): Promise<{ seconds: number; cpuSeconds: number; entries: number; bytes: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bp-audit-bench-'));
  try {
    const file = path.join(dir, 'audit.csv');
    const checkpoint = await writeSyntheticExport(file, entries);
    const bytes = statSync(file).size;
    log(`audit verify: ${entries} entries, ${Math.round(bytes / 1e6)} MB of CSV`);
    const started = process.hrtime.bigint();
    // CPU time beside wall time: on a shared machine the wall clock measures the neighbours too.
    const cpuBefore = process.cpuUsage();
    const result = await verifyExport(createReadStream(file), checkpoint);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    if (!result.valid || result.entries !== entries) throw new Error(`the synthetic chain did not verify: ${result.problem}`);
    return { seconds, cpuSeconds, entries, bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run alone: `npx tsx deploy/bench/audit-verify-step.ts [entries]`.
if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  const entries = Number(process.argv[2] ?? 1_000_000);
  const figure = await benchAuditVerify(entries, (message) => process.stderr.write(`${message}\n`));
  process.stdout.write(`${JSON.stringify({ name: 'audit_verify_offline_1m_entries', value: Number(figure.seconds.toFixed(1)), unit: 's', cpu_seconds: Number(figure.cpuSeconds.toFixed(1)), entries: figure.entries, megabytes: Math.round(figure.bytes / 1e6), target: '< 60 s', pass: figure.seconds < 60 })}\n`);
}
