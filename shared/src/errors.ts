/** Fixed server error texts that the console shows as they are. */
export const AUTH_MESSAGES = {
  authenticationRequired: 'Authentication required',
  loginBlocked: 'Account temporarily blocked due to too many failed login attempts. Please try again later.',
  invalidCredentials: 'Invalid email or password',
  forbidden: 'You do not have permission to perform this action',
  signupDisabled: 'Signup is disabled on this server',
  invalidResetToken: 'Invalid reset token',
} as const;

export const INSTRUMENT_MESSAGES = {
  duplicateName: 'There is already an instrument with this name, provide a different name.',
} as const;

export const NOT_FOUND_MESSAGE = 'Not found';
