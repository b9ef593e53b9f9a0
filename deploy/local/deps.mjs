/** Installs the npm dependencies when they are missing or older than package-lock.json. */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './services.mjs';

export function ensureDependencies() {
  const marker = path.join(ROOT, 'node_modules', '.package-lock.json');
  const lock = path.join(ROOT, 'package-lock.json');
  const fresh = existsSync(marker) && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs);
  if (fresh) return;
  process.stdout.write('[deps] installing npm dependencies\n');
  const result = spawnSync('npm', [existsSync(lock) ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: ROOT, stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('npm install failed');
}
