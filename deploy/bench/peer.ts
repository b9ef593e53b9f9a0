/**
 * The peer the feed figures are compared with: VictoriaMetrics (Debian's `victoria-metrics`), installed
 * with apt-get when missing and started on a scratch folder and a free port, as the local services are
 * (deploy/local/services.mjs). It takes Influx line protocol on /write and answers PromQL on
 * /api/v1/query, where the bench counts the points back.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Peer {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

const commandExists = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startVictoriaMetrics(dir: string, log: (message: string) => void): Promise<Peer> {
  if (!commandExists('victoria-metrics')) {
    log('apt-get install victoria-metrics');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    const installed = spawnSync('apt-get', ['install', '-y', '-qq', 'victoria-metrics'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (installed.status !== 0) throw new Error('victoria-metrics could not be installed');
  }
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const child: ChildProcess = spawn('victoria-metrics', [
    `-storageDataPath=${path.join(dir, 'data')}`, `-httpListenAddr=127.0.0.1:${port}`,
    // The bench's timestamps lie in the past; every point must be kept and counted.
    '-retentionPeriod=100y',
    // Counted as soon as it is searchable, not a minute later, and never from a cached answer.
    '-search.latencyOffset=0s', '-search.disableCache',
    '-loggerLevel=ERROR',
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch { /* not listening yet */ }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('victoria-metrics did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    base,
    pid: child.pid!,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }),
  };
}

let polls = 0;

/**
 * Points of metric `bp_value` with label step=`step` in [startMs, endMs], as the peer counts them now.
 * Each call's label filter is new (a matcher no series fails): VictoriaMetrics caches which series a
 * filter matches, an empty answer included, and clears that cache only every 10 s. A poll that came
 * before the new series were indexed would otherwise be answered "none" until the next clearing, and the
 * peer's figure would be that timer (1 to 10 s for the same posts) rather than when its points became
 * searchable (about a second after they were written).
 */
export async function peerCount(peer: Peer, step: string, startMs: number, endMs: number): Promise<number> {
  // The window (at - range, at] must hold startMs itself.
  const rangeSeconds = Math.ceil((endMs - startMs) / 1000) + 2;
  const at = Math.floor(endMs / 1000) + 1;
  polls += 1;
  const query = `sum(count_over_time(bp_value{step="${step}",poll!="${polls}"}[${rangeSeconds}s]))`;
  const response = await fetch(`${peer.base}/api/v1/query?query=${encodeURIComponent(query)}&time=${at}`);
  if (!response.ok) throw new Error(`victoria-metrics query answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { data: { result: Array<{ value: [number, string] }> } };
  return Number(body.data.result[0]?.value[1] ?? 0);
}
