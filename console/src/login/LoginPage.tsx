/**
 * /login: the sign-in form and the inline forgot-password form. Signed-in
 * visitors are sent to /, a successful sign-in goes to /dashboard.
 *
 * A refused sign-in shows the server's text; when the refusal is about this account's failures (this
 * address blocked, or the account-wide delay), the form also offers the way in that always works: a
 * password reset through the emailed link, which clears every count.
 */
import { Button, Callout, Card, Classes, FormGroup, H3, InputGroup, Intent } from '@blueprintjs/core';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { LOGIN_DELAYED_MESSAGE_START } from '@bioprocess/shared/auth-contracts';
import { useRef, useState, type FormEvent } from 'react';
import { Link, Navigate, useNavigate } from 'react-router-dom';
import { forgotPasswordRequest } from '../auth/auth-api.ts';
import { takeSignedOutReason } from '../auth/session-store.ts';
import { useAuth } from '../auth/useAuth.ts';
import { BrandMark, PRODUCT_NAME } from '../components/BrandMark.tsx';
import { LoadingScreen } from '../components/LoadingScreen.tsx';
import { showToast } from '../components/toaster.ts';

type View = 'login' | 'forgot';

/** What a refused sign-in was about, from the server's text. */
type Refusal = 'address_blocked' | 'account_delayed' | 'other';

function refusalOf(message: string): Refusal {
  if (message === AUTH_MESSAGES.loginBlocked) return 'address_blocked';
  if (message.startsWith(LOGIN_DELAYED_MESSAGE_START)) return 'account_delayed';
  return 'other';
}

const RESET_HINTS: Record<Exclude<Refusal, 'other'>, string> = {
  address_blocked: 'Too many wrong passwords were tried for this account from here. Other places are not affected. '
    + 'To sign in now, reset your password: the emailed link works whatever the count.',
  account_delayed: 'Many wrong passwords were tried for this account, so sign-ins are slowed down for a while. '
    + 'To sign in now, reset your password: the emailed link works whatever the count.',
};

export function LoginPage() {
  const { isAuthenticated, isLoading } = useAuth();
  const [view, setView] = useState<View>('login');
  // Carried into the reset form, so the owner does not type the address twice.
  const [resetEmail, setResetEmail] = useState('');
  // Visitors who arrive signed in go to / (which decides per host); a sign-in made here goes to the
  // dashboard even on the landing host, where / would not redirect.
  const signedInHere = useRef(false);
  if (isLoading) return <LoadingScreen />;
  if (isAuthenticated) return <Navigate to={signedInHere.current ? '/dashboard' : '/'} replace />;
  return (
    <div className="app-auth-page">
      <Link to="/" className="app-auth-brand" aria-label={`${PRODUCT_NAME} home`}><BrandMark /></Link>
      <Card elevation={2} className="app-auth-card">
        {view === 'login'
          ? <LoginForm onForgotPassword={(email) => { setResetEmail(email); setView('forgot'); }} onSigningIn={() => { signedInHere.current = true; }} />
          : <ForgotPasswordForm initialEmail={resetEmail} onBack={() => setView('login')} />}
      </Card>
    </div>
  );
}

function LoginForm({ onForgotPassword, onSigningIn }: { onForgotPassword: (email: string) => void; onSigningIn: () => void }) {
  const { login } = useAuth();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [showPassword, setShowPassword] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [signedOutReason] = useState(takeSignedOutReason);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setRefusal(null);
    if (!email.trim() || !password) {
      showToast({ title: 'Validation Error', message: 'Please fill in all fields', intent: 'danger' });
      return;
    }
    setBusy(true);
    onSigningIn();
    try {
      await login(email.trim(), password);
      showToast({ title: 'Login Successful', message: 'You have been logged in successfully!', intent: 'success' });
      navigate('/dashboard', { replace: true });
    } catch (error) {
      const message = error instanceof Error ? error.message : 'Login failed';
      showToast({ title: 'Login Failed', message, intent: 'danger' });
      setRefusal(refusalOf(message));
      setBusy(false);
    }
  };

  return (
    // noValidate: the product's own messages replace the browser's bubbles; the inputs stay typed and required.
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="login-title">
      <H3 className="app-auth-title" id="login-title">Welcome to {PRODUCT_NAME}</H3>
      <p className={`${Classes.TEXT_MUTED} app-auth-subtitle`}>Sign in to your account to continue.</p>
      {signedOutReason && !refusal ? (
        <Callout intent={Intent.WARNING} icon="time" className="app-auth-callout" role="status" data-testid="signed-out-reason">{signedOutReason}</Callout>
      ) : null}
      {refusal === 'address_blocked' || refusal === 'account_delayed' ? (
        <Callout intent={Intent.WARNING} icon="time" className="app-auth-callout" role="alert" data-testid="login-refusal">
          <p>{RESET_HINTS[refusal]}</p>
          <Button intent={Intent.PRIMARY} variant="outlined" icon="envelope" text="Reset password by email" onClick={() => onForgotPassword(email.trim())} />
        </Callout>
      ) : null}
      <FormGroup label="Email" labelFor="login-email">
        <InputGroup id="login-email" type="email" required autoComplete="username" leftIcon="envelope" size="large"
          placeholder="you@company.com" value={email} onValueChange={setEmail} disabled={busy} autoFocus />
      </FormGroup>
      <div className="app-password-label-row">
        <label className={Classes.LABEL} htmlFor="login-password">Password</label>
        <Button variant="minimal" size="small" intent={Intent.PRIMARY} className="app-forgot-link" text="Forgot Password?" onClick={() => onForgotPassword(email.trim())} />
      </div>
      <FormGroup>
        <InputGroup id="login-password" type={showPassword ? 'text' : 'password'} required autoComplete="current-password"
          leftIcon="lock" size="large" placeholder="Your password" value={password} onValueChange={setPassword} disabled={busy}
          rightElement={(
            <Button variant="minimal" icon={showPassword ? 'eye-off' : 'eye-open'} aria-label={showPassword ? 'Hide password' : 'Show password'}
              onClick={() => setShowPassword((shown) => !shown)} />
          )} />
      </FormGroup>
      <Button type="submit" intent={Intent.PRIMARY} size="large" fill loading={busy} text="Sign In" />
      <p className={`${Classes.TEXT_MUTED} app-auth-note`}>
        By signing in, you agree to our <Link to="/terms-of-service">Terms of Service</Link> and{' '}
        <Link to="/privacy-policy">Privacy Policy</Link>.
      </p>
    </form>
  );
}

function ForgotPasswordForm({ initialEmail, onBack }: { initialEmail: string; onBack: () => void }) {
  const [email, setEmail] = useState(initialEmail);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!email.trim()) {
      showToast({ title: 'Validation Error', message: 'Please enter your email address', intent: 'danger' });
      return;
    }
    setBusy(true);
    try {
      await forgotPasswordRequest(email.trim());
      showToast({ title: 'Password Reset Email Sent', message: 'Check your inbox for instructions to reset your password.', intent: 'success' });
      setEmail('');
      onBack();
    } catch (error) {
      showToast({ title: 'Failed to Send Reset Email', message: error instanceof Error ? error.message : 'Failed to send reset email', intent: 'danger' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="forgot-title">
      <div className="app-auth-title-row">
        <Button variant="minimal" icon="arrow-left" aria-label="Back to sign in" onClick={onBack} disabled={busy} />
        <H3 className="app-auth-title" id="forgot-title">Reset Password</H3>
      </div>
      <p className={`${Classes.TEXT_MUTED} app-auth-subtitle`}>Enter your email address and we&apos;ll send you a link to reset your password.</p>
      <FormGroup label="Email" labelFor="forgot-email">
        <InputGroup id="forgot-email" type="email" required autoComplete="email" leftIcon="envelope" size="large"
          placeholder="you@company.com" value={email} onValueChange={setEmail} disabled={busy} autoFocus />
      </FormGroup>
      <Button type="submit" intent={Intent.PRIMARY} size="large" fill loading={busy} text="Send Reset Email" />
    </form>
  );
}
