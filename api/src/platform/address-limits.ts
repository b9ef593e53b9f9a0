/**
 * Per-address limits on the calls an attacker repeats (sign-in, signup, password reset, invitation
 * acceptance, guessed tokens), through @fastify/rate-limit with its counters in Redis, so every api
 * process behind a load balancer shares them. The per-account login lock (auth/login-throttle.ts)
 * is the guard of a single account; these limits bound what one address can try across accounts.
 *
 * While Redis is unreachable the limits are skipped rather than refusing every sign-in: the account
 * lock lives in PostgreSQL and keeps holding.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { AppDeps } from './deps.ts';
import { HttpError } from './http-error.ts';

export type AddressLimitName = 'signIn' | 'signup' | 'passwordReset' | 'badToken';

export function tooManyRequestsMessage(after: string): string {
  return `Too many requests from your address. Please try again in ${after}.`;
}

function maxFor(env: AppDeps['env'], name: AddressLimitName): number {
  switch (name) {
    case 'signIn': return env.RATE_LIMIT_SIGN_IN_PER_ADDRESS;
    case 'signup': return env.RATE_LIMIT_SIGNUP_PER_ADDRESS;
    case 'passwordReset': return env.RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS;
    case 'badToken': return env.RATE_LIMIT_BAD_TOKENS_PER_ADDRESS;
  }
}

/** The `config.rateLimit` of a route limited per address. */
export function addressLimit(env: AppDeps['env'], name: AddressLimitName): RateLimitOptions {
  return { max: maxFor(env, name), timeWindow: env.RATE_LIMIT_WINDOW_MINUTES * 60_000 };
}

export async function registerAddressLimits(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${deps.env.QUEUE_PREFIX}:address-limit:`,
    skipOnError: true,
    // Only the refusal carries headers; successful answers do not advertise the budget.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_request, context) => new HttpError(context.statusCode, tooManyRequestsMessage(context.after)),
  });
}

/**
 * Counts a bearer token that matched no session or API key against the caller's address; answers
 * the seconds to wait when the address is over its budget, else null.
 */
export function badTokenCounter(app: FastifyInstance, env: AppDeps['env']): (request: FastifyRequest) => Promise<{ retryAfterSeconds: number; after: string } | null> {
  const limiter = app.createRateLimit({
    ...addressLimit(env, 'badToken'),
    keyGenerator: (request) => `bad-token:${request.ip}`,
  });
  return async (request) => {
    const result = await limiter(request);
    if (result.isAllowed || !result.isExceeded) return null;
    const seconds = Math.max(1, result.ttlInSeconds);
    return { retryAfterSeconds: seconds, after: seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds` };
  };
}
