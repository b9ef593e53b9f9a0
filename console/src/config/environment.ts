/**
 * Which environment the console runs in, decided by the host name, and what that
 * means for the landing page: where Sign In goes and whether signed-in visitors are sent on to the
 * dashboard.
 */
import type { PublicConfig } from './public-config.ts';

export type EnvironmentKind = 'local' | 'app' | 'landing' | 'staging';

export interface Environment {
  kind: EnvironmentKind;
  /** A staging deployment (staging app host, staging landing host, or a container host named *stag*). */
  isStaging: boolean;
  /** Signed-in visitors of `/` go to /dashboard everywhere except on the landing host. */
  redirectAuthenticatedToDashboard: boolean;
  /** Signed-out visitors of `/` go to /login on the app and staging hosts. */
  redirectUnauthenticatedToLogin: boolean;
  /** Where the landing page's Sign In leads: the app's login page, on another host from the landing host. */
  signInUrl: string;
}

type HostConfig = Pick<PublicConfig, 'appHost' | 'landingHost' | 'stagingHost' | 'stagingLandingHost' | 'containerPlatformSuffixes'>;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::1', '[::1]']);

export function normalizeHost(hostname: string): string {
  return hostname.trim().toLowerCase().replace(/\.$/, '');
}

export function isLocalHost(host: string): boolean {
  return LOCAL_HOSTS.has(host) || host.endsWith('.localhost') || /^192\.168\.\d{1,3}\.\d{1,3}$/.test(host);
}

function withoutWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

function classify(host: string, config: HostConfig): { kind: EnvironmentKind; isStaging: boolean } {
  if (isLocalHost(host)) return { kind: 'local', isStaging: false };
  const bare = withoutWww(host);
  if (bare === withoutWww(config.landingHost)) return { kind: 'landing', isStaging: false };
  if (bare === withoutWww(config.stagingLandingHost)) return { kind: 'landing', isStaging: true };
  if (host === config.stagingHost) return { kind: 'staging', isStaging: true };
  if (host === config.appHost) return { kind: 'app', isStaging: false };
  if (config.containerPlatformSuffixes.some((suffix) => host.endsWith(suffix))) {
    // Preview deployments are named after their service; the staging one has "stag" in its name.
    return host.includes('stag') ? { kind: 'staging', isStaging: true } : { kind: 'app', isStaging: false };
  }
  // Any other host serving the console is a deployment of the app (e.g. a customer's own domain).
  return { kind: 'app', isStaging: false };
}

export function environmentForHost(hostname: string, config: HostConfig): Environment {
  const host = normalizeHost(hostname);
  const { kind, isStaging } = classify(host, config);
  const signInUrl = kind === 'landing' ? `https://${isStaging ? config.stagingHost : config.appHost}/login` : '/login';
  return {
    kind,
    isStaging,
    redirectAuthenticatedToDashboard: kind !== 'landing',
    redirectUnauthenticatedToLogin: kind === 'app' || kind === 'staging',
    signInUrl,
  };
}
