/**
 * The test object every end-to-end spec uses: it records each console warning and error and each
 * uncaught page error during a test and fails the test when there was any, so the console stays
 * quiet on every page the walk visits. A test that provokes an error on purpose (a refused sign-in,
 * a failing upload) names the messages it expects with `test.use({ expectedConsoleMessages: refusedRequests(...) })`.
 * The patterns sit inside an object: Playwright reads an array given to `test.use` as a fixture's
 * [value, options] pair, which would take the second pattern for options.
 */
import { expect, test as base } from '@playwright/test';

export interface QuietConsoleOptions {
  /** Messages this test provokes on purpose; everything else fails it. */
  expectedConsoleMessages: { patterns: RegExp[] };
}

export const test = base.extend<QuietConsoleOptions & { consoleMessages: string[] }>({
  expectedConsoleMessages: [{ patterns: [] }, { option: true }],
  consoleMessages: [async ({ page, expectedConsoleMessages }, use) => {
    const messages: string[] = [];
    const record = (text: string) => {
      if (!expectedConsoleMessages.patterns.some((pattern) => pattern.test(text))) messages.push(text);
    };
    page.on('console', (message) => {
      if (message.type() === 'warning' || message.type() === 'error') {
        const location = message.location();
        record(`${message.type()}: ${message.text()}${location.url ? ` (${location.url})` : ''}`);
      }
    });
    page.on('pageerror', (error) => record(`pageerror: ${error.message}`));
    await use(messages);
    expect(messages, 'console warnings and errors during the test').toEqual([]);
  }, { auto: true }],
});

export { expect };
export type { Locator, Page } from '@playwright/test';

/**
 * What a request the test makes fail on purpose leaves in the console: the browser's note of the 4xx
 * answer, and the console's own log lines for the failure it handled (given by the test).
 */
export function refusedRequests(...handledFailures: RegExp[]): { patterns: RegExp[] } {
  return { patterns: [/Failed to load resource: the server responded with a status of 4\d\d/, ...handledFailures] };
}
