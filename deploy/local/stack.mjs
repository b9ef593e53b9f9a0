/**
 * Runs the product: applies migrations, builds the console when its sources changed, then starts the
 * api, the ingest-worker, the audit-worker, the export-worker and the alert-worker as child processes and stops them all together.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { apiProcessEnv } from './allocator.mjs';
import { ROOT } from './services.mjs';

function newestMtime(dir) {
  // Files only: removing a file the bundle uses means editing the file that imported it.
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // Tests never reach the bundle; editing one must not cost a console rebuild.
    if (entry.name === 'node_modules' || /\.test\.tsx?$/.test(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** Everything the console bundle is built from; a change to any of them triggers a rebuild. */
const CONSOLE_INPUTS = [
  'console/src', 'console/public', 'console/index.html', 'console/vite.config.ts', 'console/tsconfig.json',
  'console/package.json', 'shared/src', 'package-lock.json',
];

function mtimeOf(target) {
  if (!existsSync(target)) return 0;
  return statSync(target).isDirectory() ? newestMtime(target) : statSync(target).mtimeMs;
}

export function buildConsoleIfStale(env = process.env) {
  const built = path.join(ROOT, 'console', 'dist', 'index.html');
  const sources = Math.max(...CONSOLE_INPUTS.map((input) => mtimeOf(path.join(ROOT, input))));
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  process.stdout.write('[stack] building the console\n');
  const startedAt = new Date();
  const result = spawnSync('npm', ['run', 'build', '-w', 'console'], { cwd: ROOT, stdio: 'inherit', env });
  if (result.status !== 0) throw new Error('the console build failed; see the errors above');
  // Dated from the start of the build, so a source saved while it ran triggers the next rebuild.
  utimesSync(built, startedAt, startedAt);
}

/**
 * How a process runs. `npm start` and `npm run dev` run the TypeScript sources through tsx: after an
 * edit they start at once, where compiling the server (`npm run build:server`) took about 50 s on this
 * 2-core machine, for a compiled api that reached its first health answer only about 4 s sooner
 * (7-9 s against 11-14 s, measured while the machine was busy) with 35 MB less memory. The images
 * (deploy/Dockerfile.*), the end-to-end tests (e2e-stack.mjs), the bench and the soak run the compiled output: `node
 * --conditions=compiled <package>/dist/...js`, the condition under which @bioprocess/shared resolves
 * to its shared/dist.
 */
export function nodeArguments(entry, compiled) {
  if (!compiled) return ['--import', 'tsx', path.join(ROOT, entry)];
  return ['--conditions=compiled', path.join(ROOT, entry.replace(/^([^/]+)\/src\/(.+)\.ts$/, '$1/dist/$2.js'))];
}

/** Compiles shared, the api and the workers into their dist/ folders (tsc -b: about a second when nothing changed). */
export function buildServer(env = process.env) {
  const result = spawnSync('npm', ['run', '--silent', 'build:server'], { cwd: ROOT, stdio: 'inherit', env });
  if (result.status !== 0) throw new Error('the server build failed; see the errors above');
}

export function runMigrations(env, { compiled = false } = {}) {
  const result = spawnSync(process.execPath, nodeArguments('api/src/migrate-cli.ts', compiled), { cwd: ROOT, stdio: 'inherit', env });
  if (result.status !== 0) throw new Error('migrations failed');
}

const PROCESSES = [
  { name: 'api', entry: 'api/src/main.ts', env: apiProcessEnv },
  { name: 'ingest-worker', entry: 'ingest-worker/src/main.ts' },
  { name: 'audit-worker', entry: 'audit-worker/src/main.ts' },
  { name: 'export-worker', entry: 'api/src/exports/worker-main.ts' },
  { name: 'connector', entry: 'ingest-worker/src/connectors/main.ts' },
  { name: 'alert-worker', entry: 'api/src/alerts/worker-main.ts' },
  // The simulated OPC UA bioreactor and MQTT publisher the demo seed maps to its running run.
  { name: 'integrations-demo', entry: 'ingest-worker/src/connectors/demo/main.ts', enabled: (env) => env.DEMO_INTEGRATIONS === 'true' },
];

/**
 * Starts the processes (api and workers), from the sources or, with compiled, from the build output.
 * Resolves to { stop, exited } where exited settles when any of them stops on its own (then the others
 * are stopped too).
 */
export function startProcesses(env, { only, compiled = false } = {}) {
  const children = [];
  let stopping = false;
  const stop = async (signal = 'SIGTERM') => {
    stopping = true;
    await Promise.all(children.map(({ child }) => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill(signal);
      setTimeout(() => { child.kill('SIGKILL'); resolve(); }, 15_000).unref();
    })));
  };
  const exited = new Promise((resolve) => {
    for (const { name, entry, env: ownEnv } of PROCESSES.filter((p) => (!only || only.includes(p.name)) && (!p.enabled || p.enabled(env)))) {
      const child = spawn(process.execPath, nodeArguments(entry, compiled), {
        cwd: ROOT, env: ownEnv ? ownEnv(env) : env, stdio: ['ignore', 'inherit', 'inherit'],
      });
      child.once('exit', (code, signal) => {
        if (!stopping) {
          process.stderr.write(`[stack] ${name} stopped (${signal ?? `exit ${code}`}); stopping the others\n`);
          void stop().then(() => resolve(code || 1));
        }
      });
      children.push({ name, child });
    }
  });
  return { stop, exited, children };
}
