/** Opaque bearer and link tokens: 32 random bytes, shown once, stored only as their sha256 hash. */
import { randomBytes } from 'node:crypto';
import { hashToken } from './principal.ts';

export interface IssuedToken {
  token: string;
  tokenHash: string;
}

export function issueToken(prefix = ''): IssuedToken {
  const token = `${prefix}${randomBytes(32).toString('base64url')}`;
  return { token, tokenHash: hashToken(token) };
}
