/**
 * Encryption at rest of integration secrets (a source's password or private key, the connector's API
 * key): AES-256-GCM under INTEGRATIONS_SECRET_KEY, so a database dump or backup alone reveals none of
 * them. A stored value is version byte | 12-byte nonce | 16-byte tag | ciphertext; the row's id and
 * purpose are bound in as associated data, so a ciphertext copied into another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const FORMAT_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class IntegrationSecretError extends Error {}

/** The 32-byte key from its configured text: 64 hex digits or base64 of 32 bytes. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new IntegrationSecretError('INTEGRATIONS_SECRET_KEY must be 32 bytes, written as 64 hex digits or base64');
  return key;
}

/** Text accepted by parseSecretKey, for a fresh key. */
export function generateSecretKey(): string {
  return randomBytes(32).toString('hex');
}

export function encryptSecret(key: Buffer, plaintext: string, context: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT_VERSION]), nonce, cipher.getAuthTag(), body]);
}

export function decryptSecret(key: Buffer, stored: Buffer, context: string): string {
  if (stored.length < 1 + NONCE_BYTES + TAG_BYTES || stored[0] !== FORMAT_VERSION) {
    throw new IntegrationSecretError('stored secret has an unknown format');
  }
  const nonce = stored.subarray(1, 1 + NONCE_BYTES);
  const tag = stored.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(stored.subarray(1 + NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // Wrong key (rotated without re-encrypting) or tampered row: say which, never what.
    throw new IntegrationSecretError('stored secret does not decrypt with INTEGRATIONS_SECRET_KEY');
  }
}

/** Associated data of a connection's source secret and of its API key. */
export const secretContext = {
  source: (connectionId: number) => `integration-connection:${connectionId}:source`,
  apiKey: (connectionId: number) => `integration-connection:${connectionId}:api-key`,
};
