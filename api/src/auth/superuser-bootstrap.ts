/**
 * Start-up task: makes sure the superuser named by SUPERUSER_EMAIL exists (created with
 * SUPERUSER_PASSWORD in its own organisation). Idempotent: an existing account keeps its password and
 * organisation and is only made superuser again if it was demoted.
 */
import { isPasswordValid, PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { AppDeps } from '../platform/deps.ts';
import { hashPassword } from './passwords.ts';

export const SUPERUSER_ORGANIZATION_NAME = 'Platform administration';

export async function ensureSuperuser(deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>): Promise<void> {
  const { SUPERUSER_EMAIL: email, SUPERUSER_PASSWORD: password } = deps.env;
  if (!email || !password) {
    deps.logger.debug('SUPERUSER_EMAIL/SUPERUSER_PASSWORD not set: no superuser bootstrap');
    return;
  }
  if (!isPasswordValid(password)) throw new Error(`SUPERUSER_PASSWORD: ${PASSWORD_REQUIREMENTS_MESSAGE}`);
  const passwordHash = await hashPassword(password);
  await withTransaction(deps.pg, async (client) => {
    // Serialises concurrent start-ups of several api processes.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('superuser-bootstrap'))`);
    const existing = await client.query('SELECT id, superuser FROM users WHERE lower(email) = lower($1)', [email]);
    if (existing.rows[0]) {
      if (!existing.rows[0].superuser) {
        await client.query('UPDATE users SET superuser = true, updated_at = now() WHERE id = $1', [existing.rows[0].id]);
        deps.logger.info({ email }, 'existing account made superuser');
      }
      return;
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
    deps.logger.info({ email }, 'superuser created');
  });
}
