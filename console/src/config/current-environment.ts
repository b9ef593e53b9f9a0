/** The environment of this page load (host from the browser, hosts from the public configuration). */
import { environmentForHost, type Environment } from './environment.ts';
import { publicConfig } from './public-config.ts';

export const currentEnvironment: Environment = environmentForHost(window.location.hostname, publicConfig);
