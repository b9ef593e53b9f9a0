/**
 * Start-up task: makes sure the superuser named by SUPERUSER_EMAIL exists, in its own organisation.
 * Idempotent: an existing account keeps its password and organisation and is only made superuser
 * again if it was demoted.
 *
 * Its password is SUPERUSER_PASSWORD when set; otherwise one is generated on first start, stored only
 * as its hash and printed once. A server reachable from other machines (listening on a non-loopback
 * address) refuses to start while a superuser could sign in with a password published in this
 * repository (the demo passwords of `npm start`): on loopback they are a convenience, on a network an
 * open door.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import { isPasswordValid, PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { AppDeps } from '../platform/deps.ts';
import { hashPassword, verifyPassword } from './passwords.ts';

export const SUPERUSER_ORGANIZATION_NAME = 'Platform administration';

/** Passwords anyone can read in this repository (README, deploy/local): fine on loopback only. */
export const WELL_KNOWN_PASSWORDS: readonly string[] = ['Admin-Bioprocess1!', 'Demo-Bioprocess1!'];

export class PublishedPasswordError extends Error {}

/** Whether the listen address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** A random password that meets the policy: 24 url-safe characters plus one of each required class. */
export function generateSuperuserPassword(): string {
  const pick = (alphabet: string) => alphabet[randomInt(alphabet.length)]!;
  return `${randomBytes(18).toString('base64url')}${pick('ABCDEFGHJKLMNPQRSTUVWXYZ')}${pick('abcdefghijkmnpqrstuvwxyz')}${pick('23456789')}${pick('@$!%*?&')}`;
}

/** Written straight to the terminal, never to the structured log: it is a secret shown this once. */
function announceGeneratedPassword(email: string, password: string): void {
  process.stdout.write([
    '',
    '  ==================================================================',
    `  Superuser ${email} created with the generated password:`,
    `      ${password}`,
    '  It is shown only this once (only its hash is stored). Sign in and keep it safe,',
    '  or set SUPERUSER_PASSWORD before the first start to choose it yourself.',
    '  ==================================================================',
    '',
  ].join('\n') + '\n');
}

export interface SuperuserBootstrapOptions {
  /** Where the generated password goes; the terminal by default. */
  announce?: (email: string, password: string) => void;
}

export async function ensureSuperuser(deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>, options: SuperuserBootstrapOptions = {}): Promise<void> {
  const { SUPERUSER_EMAIL: email, SUPERUSER_PASSWORD: configuredPassword, HOST: host } = deps.env;
  const onNetwork = !isLoopbackHost(host);
  if (configuredPassword !== undefined) {
    if (!isPasswordValid(configuredPassword)) throw new Error(`SUPERUSER_PASSWORD: ${PASSWORD_REQUIREMENTS_MESSAGE}`);
    if (onNetwork && WELL_KNOWN_PASSWORDS.includes(configuredPassword)) {
      throw new PublishedPasswordError(
        `SUPERUSER_PASSWORD is a published demo password and HOST=${host} accepts connections from other machines: `
        + 'choose another password, leave it unset to have one generated, or listen on 127.0.0.1',
      );
    }
  }
  if (email) await createSuperuserIfMissing(deps, email, configuredPassword, options);
  else deps.logger.debug('SUPERUSER_EMAIL not set: no superuser bootstrap');
  if (onNetwork) await refuseWellKnownSuperuserPasswords(deps, host);
}

async function createSuperuserIfMissing(
  deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>, email: string, configuredPassword: string | undefined, options: SuperuserBootstrapOptions,
): Promise<void> {
  const password = configuredPassword ?? generateSuperuserPassword();
  // Hashed up front: the transaction below must not hold its lock for the length of a hash.
  const passwordHash = await hashPassword(password);
  const created = await withTransaction(deps.pg, async (client) => {
    // Serialises concurrent start-ups of several api processes.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('superuser-bootstrap'))`);
    const existing = await client.query('SELECT id, superuser FROM users WHERE lower(email) = lower($1)', [email]);
    if (existing.rows[0]) {
      if (!existing.rows[0].superuser) {
        await client.query('UPDATE users SET superuser = true, updated_at = now() WHERE id = $1', [existing.rows[0].id]);
        deps.logger.info({ email }, 'existing account made superuser');
      }
      return false;
    }
    const org = await client.query('INSERT INTO organizations (name, description) VALUES ($1, $2) RETURNING id', [
      SUPERUSER_ORGANIZATION_NAME,
      'Created at start-up for the platform superuser',
    ]);
    await client.query(
      `INSERT INTO users (email, name, password_hash, organization_id, role, superuser)
       VALUES ($1, 'Platform superuser', $2, $3, 'admin', true)`,
      [email, passwordHash, org.rows[0].id],
    );
    deps.logger.info({ email, password_generated: configuredPassword === undefined }, 'superuser created');
    return true;
  });
  if (created && configuredPassword === undefined) (options.announce ?? announceGeneratedPassword)(email, password);
}

/** Refuses to serve a network while any superuser still signs in with a published password. */
async function refuseWellKnownSuperuserPasswords(deps: Pick<AppDeps, 'pg'>, host: string): Promise<void> {
  const { rows } = await deps.pg.query('SELECT email, password_hash FROM users WHERE superuser AND password_hash IS NOT NULL');
  for (const row of rows as { email: string; password_hash: string }[]) {
    for (const published of WELL_KNOWN_PASSWORDS) {
      if (await verifyPassword(row.password_hash, published)) {
        throw new PublishedPasswordError(
          `superuser ${row.email} still has a published demo password and HOST=${host} accepts connections from other machines: `
          + 'change its password (or listen on 127.0.0.1) before serving a network',
        );
      }
    }
  }
}
