/** The password policy, shared by the reset page checklist and the server. */
import { z } from 'zod';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;
export const PASSWORD_SPECIAL_CHARACTERS = '@$!%*?&';

export interface PasswordRuleResult {
  length: boolean;
  uppercase: boolean;
  lowercase: boolean;
  number: boolean;
  special: boolean;
}

export const PASSWORD_RULE_LABELS: Record<keyof PasswordRuleResult, string> = {
  length: '8-128 characters',
  uppercase: 'One uppercase letter',
  lowercase: 'One lowercase letter',
  number: 'One number',
  special: 'One special character (@$!%*?&)',
};

export const PASSWORD_REQUIREMENTS_MESSAGE = 'Password must meet all requirements';

export function checkPassword(password: string): PasswordRuleResult {
  return {
    length: password.length >= PASSWORD_MIN_LENGTH && password.length <= PASSWORD_MAX_LENGTH,
    uppercase: /[A-Z]/.test(password),
    lowercase: /[a-z]/.test(password),
    number: /\d/.test(password),
    special: /[@$!%*?&]/.test(password),
  };
}

export function isPasswordValid(password: string): boolean {
  return Object.values(checkPassword(password)).every(Boolean);
}

export const passwordSchema = z.string().refine(isPasswordValid, { message: PASSWORD_REQUIREMENTS_MESSAGE });
