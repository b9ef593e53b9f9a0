/**
 * Every signed-in page at phone width (390 x 844): the sidebar gives way to a menu button and a
 * drawer, and no page scrolls sideways (the page's scroll width never exceeds its width).
 */
import { expect, test, type Page } from './support/quiet-console.ts';
import { adminSession, createRunFixture } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 390, height: 844 } });

async function expectNoSidewaysScroll(page: Page, route: string): Promise<void> {
  const widths = await page.evaluate(() => {
    const root = document.scrollingElement!;
    return { scroll: root.scrollWidth, client: root.clientWidth };
  });
  expect(widths.scroll, `${route} scrolls sideways`).toBeLessThanOrEqual(widths.client);
}

test('every signed-in page fits a phone without sideways scrolling', async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const fixture = await createRunFixture(request, session);
  const fermentation = fixture.unitOperations[0]!;
  const routes: Array<{ path: string; ready: (page: Page) => Promise<void> }> = [
    { path: '/dashboard', ready: (p) => expect(p.getByRole('heading', { name: 'Dashboard' })).toBeVisible() },
    { path: '/runs/overview', ready: (p) => expect(p.getByText(fixture.run.name).first()).toBeVisible() },
    { path: '/runs/compare', ready: (p) => expect(p.getByRole('heading', { name: 'Compare runs' })).toBeVisible() },
    { path: `/runs/${fixture.run.id}`, ready: (p) => expect(p.getByText(fixture.run.name).first()).toBeVisible() },
    {
      path: `/runs/${fixture.run.id}/unit-operations/${fermentation.id}`,
      ready: (p) => expect(p.getByTestId('process-parameters-chart').locator('.highcharts-root')).toBeVisible(),
    },
    { path: '/data', ready: (p) => expect(p.getByRole('heading', { name: 'Data Management' })).toBeVisible() },
    { path: '/settings', ready: (p) => expect(p.getByRole('tab').first()).toBeVisible() },
  ];

  // The first page settles before the walk: leaving it while the stored session is being checked
  // would cut that check short, which ends the session.
  await signInWithSession(page, session, '/dashboard');
  await routes[0]!.ready(page);
  for (const route of routes) {
    await page.goto(route.path);
    await route.ready(page);
    // Lazy content (charts, tables) settles before the width is measured.
    await page.waitForLoadState('networkidle');
    await expectNoSidewaysScroll(page, route.path);
    await page.screenshot({ path: testInfo.outputPath(`phone${route.path.replace(/\//g, '-')}.png`), fullPage: true });
  }

  // Settings tabs, each at phone width.
  await page.goto('/settings');
  for (const tab of await page.getByRole('tab').all()) {
    await tab.click();
    await page.waitForLoadState('networkidle');
    await expectNoSidewaysScroll(page, `/settings (${await tab.innerText()})`);
  }

  // The navigation lives in a drawer behind the menu button and closes on navigation.
  await expect(page.getByRole('complementary', { name: 'Main navigation' })).toHaveCount(0);
  await page.getByTestId('navigation-menu-button').click();
  const navigation = page.getByRole('complementary', { name: 'Main navigation' });
  await expect(navigation).toBeVisible();
  await navigation.getByTestId('sidebar-data').click();
  await expect(page).toHaveURL(/\/data$/);
  await expect(navigation).toBeHidden();
});
