/** Landing page, legal pages, not-found page and redirects. */
import { expect, test } from './support/quiet-console.ts';
import { saveScreenshot } from './support/screens.ts';

test.describe('landing page', () => {
  test('shows the hero, the four features, the three metrics, Contact Us and the footer', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Smarter Biomanufacturing.' })).toBeVisible();
    for (const feature of ['Automated data collection', 'Unified storage', 'FAIR', 'Enterprise-grade security']) {
      await expect(page.getByRole('heading', { name: feature, exact: true })).toBeVisible();
    }
    for (const metric of ['80%', '2x', '50%']) await expect(page.getByText(metric, { exact: true })).toBeVisible();
    await expect(page.getByText('less manual work')).toBeVisible();
    await expect(page.getByText('faster time-to-insight')).toBeVisible();
    await expect(page.getByText('easier knowledge sharing')).toBeVisible();

    // Blueprint's AnchorButton is a link with the button role.
    const contact = page.getByRole('button', { name: 'Contact Us' });
    await expect(contact).toHaveAttribute('href', /^mailto:.+@.+/);
    const bookDemo = page.getByRole('button', { name: 'Book a demo' }).first();
    await expect(bookDemo).toHaveAttribute('href', /^https:\/\//);
    await expect(bookDemo).toHaveAttribute('target', '_blank');

    const footer = page.locator('footer');
    await expect(footer.getByText('© 2025')).toBeVisible();
    await expect(footer.getByRole('link', { name: 'Privacy Policy' })).toHaveAttribute('href', '/privacy-policy');
    await expect(footer.getByRole('link', { name: 'Terms of Service' })).toHaveAttribute('href', '/terms-of-service');
    await expect(footer.getByRole('link', { name: 'LinkedIn' })).toHaveAttribute('href', /^https:\/\//);
    await expect(footer.locator('a[href^="mailto:"]')).toHaveCount(1);
    await saveScreenshot(page, 'landing', { fullPage: true });
  });

  test('the process chart is live: temperature, pH and feed rate move on their own', async ({ page }) => {
    await page.goto('/');
    const chart = page.getByTestId('live-process-chart');
    await expect(chart.getByText('Temperature', { exact: true })).toBeVisible();
    await expect(chart.getByText('pH', { exact: true }).first()).toBeVisible();
    await expect(chart.getByText('Feed rate', { exact: true })).toBeVisible();
    const firstLine = chart.locator('path.highcharts-graph').first();
    const before = await firstLine.getAttribute('d');
    await expect.poll(() => firstLine.getAttribute('d'), { timeout: 10_000 }).not.toBe(before);
    await saveScreenshot(page, 'landing-live-chart');
  });

  test('Platform, Features and Solutions scroll smoothly to their section, 80px below the top', async ({ page }) => {
    await page.goto('/');
    for (const [label, id] of [['Features', 'features'], ['Solutions', 'solutions'], ['Platform', 'platform']] as const) {
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: label }).click();
      // Smooth scrolling takes a moment; the section ends up 80px below the viewport top (or the page is at the top).
      await expect.poll(async () => page.evaluate((sectionId) => {
        const top = document.getElementById(sectionId)!.getBoundingClientRect().top;
        return window.scrollY === 0 ? 'top' : Math.round(top);
      }, id), { timeout: 5_000 }).toBe(id === 'platform' ? 'top' : 80);
      await expect(page).toHaveURL(new RegExp(`#${id}$`));
    }
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Solutions' }).click();
    await page.waitForTimeout(800);
    await saveScreenshot(page, 'landing-solutions');
  });

  test('Sign In leads to /login on this host', async ({ page }) => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Sign In' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('heading', { name: /Welcome to/ })).toBeVisible();
  });
});

test.describe('legal pages', () => {
  test('the footer opens the privacy policy at the top, with its facts', async ({ page }) => {
    await page.goto('/');
    await page.locator('footer').scrollIntoViewIfNeeded();
    await page.locator('footer').getByRole('link', { name: 'Privacy Policy' }).click();
    await expect(page).toHaveURL(/\/privacy-policy$/);
    await expect(page.getByRole('heading', { name: 'Privacy Policy', level: 1 })).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
    const text = page.locator('main');
    await expect(text).toContainText('at least 16 years old');
    await expect(text).toContainText('7 years');
    await expect(text).toContainText('12 months');
    await expect(text).toContainText('72 hours');
    await expect(text).toContainText('within 30 days');
    await expect(text).toContainText('role-based access controls');
    await expect(page.locator('footer')).toContainText('© 2025');
    await saveScreenshot(page, 'privacy-policy');
  });

  test('the footer opens the terms of service at the top, with its facts', async ({ page }) => {
    await page.goto('/privacy-policy');
    await page.locator('footer').scrollIntoViewIfNeeded();
    await page.locator('footer').getByRole('link', { name: 'Terms of Service' }).click();
    await expect(page).toHaveURL(/\/terms-of-service$/);
    await expect(page.getByRole('heading', { name: 'Terms of Service', level: 1 })).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
    const text = page.locator('main');
    await expect(text).toContainText('Last updated: September 25th, 2025');
    await expect(text).toContainText('at least 18 years old');
    await expect(text).toContainText('monthly or annually');
    await expect(text).toContainText("3 months' written notice");
    await expect(text).toContainText('1 month before');
    await expect(text).toContainText('6 months');
    await expect(text).toContainText('12 months');
    await expect(text).toContainText('export your data for 30 days');
    await expect(text).toContainText('30 days before');
    await expect(text).toContainText('Dutch law');
    await expect(text).toContainText('Rotterdam');
    await saveScreenshot(page, 'terms-of-service');
  });
});

test.describe('redirects and not-found', () => {
  test('/inlog redirects to /login', async ({ page }) => {
    await page.goto('/inlog');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('an unknown path shows the not-found page with a way home', async ({ page }) => {
    await page.goto('/this/does/not/exist');
    await expect(page.getByText('404')).toBeVisible();
    await expect(page.getByText('Oops! Page not found')).toBeVisible();
    await saveScreenshot(page, 'not-found');
    await page.getByRole('link', { name: 'Return to Home' }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('heading', { name: 'Smarter Biomanufacturing.' })).toBeVisible();
  });
});
