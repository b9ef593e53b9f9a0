/**
 * Public, build-time configuration (Vite `VITE_*` variables; nothing secret belongs here). Parsed
 * once with zod so a malformed value fails loudly at start rather than producing a broken link.
 */
import { z } from 'zod';

const hostSchema = z.string().trim().toLowerCase().min(1);

const publicConfigSchema = z.object({
  appHost: hostSchema.default('app.bioprocess.cloud'),
  landingHost: hostSchema.default('bioprocess.cloud'),
  stagingHost: hostSchema.default('staging.bioprocess.cloud'),
  /** A landing page deployed for staging; its Sign In goes to the staging app host. */
  stagingLandingHost: hostSchema.default('staging-www.bioprocess.cloud'),
  /** Host suffixes of the container platform whose default hostnames are used for previews. */
  containerPlatformSuffixes: z.string().default('.run.app,.azurecontainerapps.io')
    .transform((value) => value.split(',').map((suffix) => suffix.trim().toLowerCase()).filter(Boolean)),
  bookDemoUrl: z.url().default('https://calendly.com/bioprocess-platform/demo'),
  contactEmail: z.email().default('info@bioprocess.cloud'),
  linkedInUrl: z.url().default('https://www.linkedin.com/company/bioprocess-platform'),
});

export type PublicConfig = z.output<typeof publicConfigSchema>;

/** Empty strings count as unset, so `VITE_APP_HOST=` in a .env file keeps the default. */
function optional(value: string | undefined): string | undefined {
  return value && value.trim() ? value : undefined;
}

export function parsePublicConfig(env: Record<string, string | undefined>): PublicConfig {
  return publicConfigSchema.parse({
    appHost: optional(env.VITE_APP_HOST),
    landingHost: optional(env.VITE_LANDING_HOST),
    stagingHost: optional(env.VITE_STAGING_HOST),
    stagingLandingHost: optional(env.VITE_STAGING_LANDING_HOST),
    containerPlatformSuffixes: optional(env.VITE_CONTAINER_PLATFORM_SUFFIXES),
    bookDemoUrl: optional(env.VITE_BOOK_DEMO_URL),
    contactEmail: optional(env.VITE_CONTACT_EMAIL),
    linkedInUrl: optional(env.VITE_LINKEDIN_URL),
  });
}

export const publicConfig: PublicConfig = parsePublicConfig(import.meta.env as unknown as Record<string, string | undefined>);
