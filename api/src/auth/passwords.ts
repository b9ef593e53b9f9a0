/**
 * Password hashing with argon2id at the OWASP-recommended minimum (19 MiB, 2 passes, 1 lane) and the
 * shared password policy. Unknown accounts are verified against a dummy hash so a login answers in
 * about the same time whether or not the email exists.
 */
import argon2 from 'argon2';
import { isPasswordValid, PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { badRequest } from '../platform/http-error.ts';

const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function assertPasswordPolicy(password: string): void {
  if (!isPasswordValid(password)) throw badRequest(PASSWORD_REQUIREMENTS_MESSAGE);
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

let dummyHash: Promise<string> | null = null;

/** Verifies a password; a missing hash (unknown account, invitation not accepted) still costs one verification. */
export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  if (!passwordHash) {
    dummyHash ??= hashPassword('Dummy-Password-For-Timing1!');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(passwordHash, password);
  } catch {
    return false;
  }
}
