/** Sign-in, forgot password, lockout (per address, with the reset link as the way in) and password reset. */
import { expect, refusedRequests, test, type Locator, type Page } from './support/quiet-console.ts';
import { DEMO_EMAIL, outboxMessages, SUPERUSER_EMAIL, SUPERUSER_PASSWORD, signIn, signUp, uniqueEmail } from './support/auth.ts';
import { saveScreenshot } from './support/screens.ts';

const LOCKOUT_TEXT = 'Account temporarily blocked due to too many failed login attempts. Please try again later.';

/** Blueprint puts the intent (the red or green border) on the input's group wrapper. */
function inputGroup(input: Locator) {
  return input.locator('..');
}

/**
 * The visible toast. A replaced toast can stay visible for its exit transition; the assertions retry,
 * so `first()` settles on the current toast once the leaving one is gone.
 */
function toast(page: Page) {
  return page.getByTestId('toast').filter({ visible: true }).first();
}

async function fillLogin(page: Page, email: string, password: string) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign In', exact: true }).click();
}

test.describe('sign-in', () => {
  test.use({ expectedConsoleMessages: refusedRequests() });
  test('shows the welcome line, a typed and required email field and the terms note', async ({ page }) => {
    await page.goto('/login');
    await expect(page.getByRole('heading', { name: 'Welcome to Bioprocess Platform' })).toBeVisible();
    await expect(page.getByLabel('Email')).toHaveAttribute('type', 'email');
    await expect(page.getByLabel('Email')).toHaveAttribute('required', '');
    await expect(page.getByText(/By signing in, you agree to our/)).toBeVisible();
    await expect(page.getByRole('link', { name: 'Terms of Service' })).toHaveAttribute('href', '/terms-of-service');
    await expect(page.getByRole('link', { name: 'Privacy Policy' })).toHaveAttribute('href', '/privacy-policy');
    await saveScreenshot(page, 'login');
  });

  test("empty fields answer 'Validation Error: Please fill in all fields'", async ({ page }) => {
    await page.goto('/login');
    await page.getByRole('button', { name: 'Sign In', exact: true }).click();
    await expect(toast(page)).toContainText('Validation Error');
    await expect(toast(page)).toContainText('Please fill in all fields');
    await saveScreenshot(page, 'login-validation');
    // Only one of the two fields filled is still incomplete.
    await page.getByLabel('Email').fill('someone@example.com');
    await page.getByRole('button', { name: 'Sign In', exact: true }).click();
    await expect(toast(page)).toContainText('Please fill in all fields');
    await expect(toast(page)).toHaveCount(1);
    await expect(page).toHaveURL(/\/login$/);
    // F8 moves keyboard focus to the notifications: pressed on a fresh toast, since one that times out
    // meanwhile (5 s) hands the focus back when the toaster closes.
    await page.getByRole('button', { name: 'Sign In', exact: true }).click();
    await expect(toast(page)).toContainText('Please fill in all fields');
    await page.keyboard.press('F8');
    await expect.poll(() => page.evaluate(() => Boolean(document.activeElement?.closest('.app-toast-viewport')))).toBe(true);
  });

  test('the demo account printed by npm start signs in', async ({ page }) => {
    await signIn(page);
    await expect(page.getByTestId('user-panel')).toContainText(DEMO_EMAIL);
  });

  test('the superuser signs in', async ({ page }) => {
    await signIn(page, SUPERUSER_EMAIL, SUPERUSER_PASSWORD);
    await expect(page.getByTestId('user-panel')).toContainText(SUPERUSER_EMAIL);
  });

  test("a wrong password shows the 'Login Failed' toast with the server's message", async ({ page }) => {
    await page.goto('/login');
    await fillLogin(page, uniqueEmail('nobody'), 'Wrong-Password1!');
    await expect(toast(page)).toContainText('Login Failed');
    await expect(toast(page)).toContainText('Invalid email or password');
    await expect(page).toHaveURL(/\/login$/);
    await saveScreenshot(page, 'login-failed');
  });

  test('five failures block this address for the account with the lockout text; the emailed reset link still gets the owner in', async ({ page, request }) => {
    const account = await signUp(request, { name: 'Lockout Test' });
    await page.goto('/login');
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      await fillLogin(page, account.user.email, `Wrong-Password${attempt}!`);
      await expect(toast(page)).toContainText('Invalid email or password');
      await expect(page.getByTestId('login-refusal')).toHaveCount(0);
      // Wait for the form to be usable again before the next attempt.
      await expect(page.getByRole('button', { name: 'Sign In', exact: true })).toBeEnabled();
    }
    // The fifth failure within the window blocks this address (the browser's) for the account (HTTP 429).
    await fillLogin(page, account.user.email, 'Wrong-Password5!');
    await expect(toast(page)).toContainText(LOCKOUT_TEXT);
    await expect(page.getByRole('button', { name: 'Sign In', exact: true })).toBeEnabled();
    // Even the right password is refused from here now; the form offers the way in that always works.
    await fillLogin(page, account.user.email, account.password);
    await expect(toast(page)).toContainText('Login Failed');
    await expect(toast(page)).toContainText(LOCKOUT_TEXT);
    const refusal = page.getByTestId('login-refusal');
    await expect(refusal).toContainText('Other places are not affected');
    await expect(page).toHaveURL(/\/login$/);
    await saveScreenshot(page, 'login-lockout');

    await refusal.getByRole('button', { name: 'Reset password by email' }).click();
    await expect(page.getByRole('heading', { name: 'Reset Password' })).toBeVisible();
    await expect(page.getByLabel('Email')).toHaveValue(account.user.email);
    await page.getByRole('button', { name: 'Send Reset Email' }).click();
    await expect(toast(page)).toContainText('Password Reset Email Sent');
    let link = '';
    await expect.poll(async () => {
      const messages = await outboxMessages(request, account.user.email);
      link = messages.find((message) => message.link?.includes('/reset-password?token='))?.link ?? '';
      return link;
    }, { timeout: 15_000 }).toContain('/reset-password?token=');
    const url = new URL(link);
    await page.goto(`${url.pathname}${url.search}`);
    await page.getByLabel('New Password', { exact: true }).fill('Unlocked-Pass3!');
    await page.getByLabel('Confirm New Password').fill('Unlocked-Pass3!');
    await page.getByRole('button', { name: 'Reset Password' }).click();
    await page.getByRole('button', { name: 'Go to Login' }).click();
    // The reset cleared the count: the same address signs in.
    await fillLogin(page, account.user.email, 'Unlocked-Pass3!');
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test('a successful sign-in goes to the dashboard; signed-in visitors of /login go on to the dashboard', async ({ page, request }) => {
    const account = await signUp(request, { name: 'Sign In Test' });
    await page.goto('/login');
    await fillLogin(page, account.user.email, account.password);
    await expect(toast(page)).toContainText('Login Successful');
    await expect(toast(page)).toContainText('You have been logged in successfully!');
    await expect(page).toHaveURL(/\/dashboard$/);
    const stored = await page.evaluate(() => ({ token: localStorage.getItem('auth_token'), user: localStorage.getItem('auth_user') }));
    expect(stored.token).toMatch(/^bps_/);
    expect(JSON.parse(stored.user!)).toMatchObject({ email: account.user.email, roles: account.user.roles });
    await saveScreenshot(page, 'after-login');

    await page.goto('/login');
    await expect(page).toHaveURL(/\/dashboard$/);
    await page.goto('/');
    await expect(page).toHaveURL(/\/dashboard$/);
  });
});

test.describe('forgot password', () => {
  test("an empty email answers 'Validation Error: Please enter your email address'", async ({ page }) => {
    await page.goto('/login');
    await page.getByRole('button', { name: 'Forgot Password?' }).click();
    await expect(page.getByRole('heading', { name: 'Reset Password' })).toBeVisible();
    await page.getByRole('button', { name: 'Send Reset Email' }).click();
    await expect(toast(page)).toContainText('Validation Error');
    await expect(toast(page)).toContainText('Please enter your email address');
    await saveScreenshot(page, 'forgot-password');
    await page.getByRole('button', { name: 'Back to sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Welcome to Bioprocess Platform' })).toBeVisible();
  });

  test('the reset email is sent, the view returns to sign-in, and the emailed link resets the password', async ({ page, request }) => {
    const account = await signUp(request, { name: 'Reset Test' });
    await page.goto('/login');
    await page.getByRole('button', { name: 'Forgot Password?' }).click();
    await page.getByLabel('Email').fill(account.user.email);
    await page.getByRole('button', { name: 'Send Reset Email' }).click();
    await expect(toast(page)).toContainText('Password Reset Email Sent');
    await expect(toast(page)).toContainText('Check your inbox for instructions to reset your password.');
    await expect(page.getByRole('heading', { name: 'Welcome to Bioprocess Platform' })).toBeVisible();
    // Back in the login view; opening the reset view again shows a cleared email.
    await page.getByRole('button', { name: 'Forgot Password?' }).click();
    await expect(page.getByLabel('Email')).toHaveValue('');

    let link = '';
    await expect.poll(async () => {
      const messages = await outboxMessages(request, account.user.email);
      link = messages.find((message) => message.link?.includes('/reset-password?token='))?.link ?? '';
      return link;
    }, { timeout: 15_000 }).toContain('/reset-password?token=');
    const url = new URL(link);
    await page.goto(`${url.pathname}${url.search}`);

    const newPassword = page.getByLabel('New Password', { exact: true });
    const confirm = page.getByLabel('Confirm New Password');
    const submit = page.getByRole('button', { name: 'Reset Password' });
    await expect(submit).toBeDisabled();
    await newPassword.fill('short');
    await expect(inputGroup(newPassword)).toHaveClass(/bp6-intent-danger/);
    const rules = page.getByRole('list', { name: 'Password requirements' });
    await expect(rules.locator('li', { hasText: '8-128 characters' })).toHaveAttribute('data-met', 'false');
    await expect(rules.locator('li', { hasText: 'One lowercase letter' })).toHaveAttribute('data-met', 'true');
    await expect(rules.locator('li', { hasText: 'One uppercase letter' })).toHaveAttribute('data-met', 'false');
    await expect(rules.locator('li', { hasText: 'One number' })).toHaveAttribute('data-met', 'false');
    await expect(rules.locator('li', { hasText: 'One special character (@$!%*?&)' })).toHaveAttribute('data-met', 'false');

    await newPassword.fill('Brand-New-Pass2!');
    await expect(inputGroup(newPassword)).not.toHaveClass(/bp6-intent-danger/);
    for (const rule of await rules.locator('li').all()) await expect(rule).toHaveAttribute('data-met', 'true');
    await confirm.fill('Brand-New-Pass2');
    await expect(page.getByText('Passwords do not match')).toBeVisible();
    await expect(inputGroup(confirm)).toHaveClass(/bp6-intent-danger/);
    await expect(submit).toBeDisabled();
    await confirm.fill('Brand-New-Pass2!');
    await expect(page.getByText('Passwords match')).toBeVisible();
    await expect(inputGroup(confirm)).toHaveClass(/bp6-intent-success/);
    await saveScreenshot(page, 'reset-password-form');
    await submit.click();

    await expect(page.getByRole('heading', { name: 'Password Reset Successful' })).toBeVisible();
    await expect(toast(page)).toContainText('You can now log in with your new password.');
    await saveScreenshot(page, 'reset-password-success');
    await expect(page).toHaveURL(/\/login$/, { timeout: 6_000 });

    await fillLogin(page, account.user.email, 'Brand-New-Pass2!');
    await expect(page).toHaveURL(/\/dashboard$/);
  });
});

test.describe('reset password page', () => {
  test.use({ expectedConsoleMessages: refusedRequests() });
  test('without a token it says so and cannot be submitted', async ({ page }) => {
    await page.goto('/reset-password');
    await expect(page.getByText('Invalid or missing reset token')).toBeVisible();
    await page.getByLabel('New Password', { exact: true }).fill('Valid-Pass1!');
    await page.getByLabel('Confirm New Password').fill('Valid-Pass1!');
    await expect(page.getByRole('button', { name: 'Reset Password' })).toBeDisabled();
    await expect(page.getByRole('link', { name: 'Back to Login' })).toHaveAttribute('href', '/login');
    await saveScreenshot(page, 'reset-password-no-token');
  });

  test("an unknown token shows the server's error in an alert and stays on the form", async ({ page }) => {
    await page.goto('/reset-password?token=not-a-real-token');
    await page.getByLabel('New Password', { exact: true }).fill('Valid-Pass1!');
    await page.getByLabel('Confirm New Password').fill('Valid-Pass1!');
    await page.getByRole('button', { name: 'Reset Password' }).click();
    await expect(page.getByRole('alert')).toContainText(/reset token|Failed to reset password/i);
    await expect(page).toHaveURL(/\/reset-password\?token=/);
    await saveScreenshot(page, 'reset-password-bad-token');
  });
});
