import { describe, expect, it } from 'vitest';
import { environmentForHost, isLocalHost } from './environment.ts';
import { parsePublicConfig } from './public-config.ts';

const config = parsePublicConfig({
  VITE_APP_HOST: 'app.example.com',
  VITE_LANDING_HOST: 'example.com',
  VITE_STAGING_HOST: 'staging.example.com',
  VITE_STAGING_LANDING_HOST: 'staging-www.example.com',
  VITE_CONTAINER_PLATFORM_SUFFIXES: '.run.app, .azurecontainerapps.io',
});

describe('environment by host', () => {
  it.each(['localhost', '127.0.0.1', '192.168.1.20', 'console.localhost'])('%s is local: no login redirect, Sign In stays on the host', (host) => {
    expect(isLocalHost(host)).toBe(true);
    expect(environmentForHost(host, config)).toEqual({
      kind: 'local', isStaging: false, redirectAuthenticatedToDashboard: true, redirectUnauthenticatedToLogin: false, signInUrl: '/login',
    });
  });

  it('the app host redirects signed-in visitors to the dashboard and signed-out ones to /login', () => {
    expect(environmentForHost('app.example.com', config)).toEqual({
      kind: 'app', isStaging: false, redirectAuthenticatedToDashboard: true, redirectUnauthenticatedToLogin: true, signInUrl: '/login',
    });
  });

  it.each(['example.com', 'www.example.com', 'WWW.Example.com'])('the landing host %s never redirects and signs in on the app host', (host) => {
    expect(environmentForHost(host, config)).toEqual({
      kind: 'landing', isStaging: false, redirectAuthenticatedToDashboard: false, redirectUnauthenticatedToLogin: false,
      signInUrl: 'https://app.example.com/login',
    });
  });

  it('the staging landing host signs in on the staging app host', () => {
    const environment = environmentForHost('staging-www.example.com', config);
    expect(environment.kind).toBe('landing');
    expect(environment.isStaging).toBe(true);
    expect(environment.redirectAuthenticatedToDashboard).toBe(false);
    expect(environment.signInUrl).toBe('https://staging.example.com/login');
  });

  it('the staging host behaves like the app, flagged as staging', () => {
    expect(environmentForHost('staging.example.com', config)).toEqual({
      kind: 'staging', isStaging: true, redirectAuthenticatedToDashboard: true, redirectUnauthenticatedToLogin: true, signInUrl: '/login',
    });
  });

  it("container-platform hosts are staging when their name contains 'stag', otherwise app", () => {
    expect(environmentForHost('console-staging-abc123.run.app', config)).toMatchObject({ kind: 'staging', isStaging: true });
    expect(environmentForHost('console-stage.nicegrass-1.westeurope.azurecontainerapps.io', config)).toMatchObject({ kind: 'staging', isStaging: true });
    expect(environmentForHost('console-prod-abc123.run.app', config)).toMatchObject({ kind: 'app', isStaging: false, redirectUnauthenticatedToLogin: true });
  });

  it('is not fooled by look-alike hosts', () => {
    expect(isLocalHost('192.168.evil.com')).toBe(false);
    expect(isLocalHost('localhost.evil.com')).toBe(false);
    expect(environmentForHost('notexample.com', config).kind).toBe('app');
  });
});

describe('public configuration', () => {
  it('has working defaults when nothing is set (empty values count as unset)', () => {
    const defaults = parsePublicConfig({ VITE_APP_HOST: '' });
    expect(defaults.appHost).toMatch(/\./);
    expect(defaults.bookDemoUrl).toMatch(/^https:\/\//);
    expect(defaults.contactEmail).toMatch(/@/);
    expect(defaults.containerPlatformSuffixes.length).toBeGreaterThan(0);
  });

  it('rejects a malformed contact address or booking link', () => {
    expect(() => parsePublicConfig({ VITE_CONTACT_EMAIL: 'not-an-email' })).toThrow();
    expect(() => parsePublicConfig({ VITE_BOOK_DEMO_URL: 'calendar' })).toThrow();
  });
});
