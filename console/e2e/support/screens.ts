/** Screenshot helper: saves a PNG of the current page as an artifact of the running test. */
import { test, type Page } from '@playwright/test';

export async function saveScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await page.screenshot({ path: test.info().outputPath(`${name}.png`), fullPage: options.fullPage ?? false });
}
