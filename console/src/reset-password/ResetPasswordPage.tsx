/**
 * /reset-password?token=...: new password with a live checklist of the shared
 * password rule, a confirm field with a match indicator, then a success view and a redirect to
 * /login after 3 seconds.
 */
import { Button, Callout, Card, Classes, FormGroup, H3, Icon, InputGroup, Intent } from '@blueprintjs/core';
import { checkPassword, isPasswordValid, PASSWORD_REQUIREMENTS_MESSAGE, PASSWORD_RULE_LABELS, type PasswordRuleResult } from '@bioprocess/shared/password';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { resetPasswordRequest } from '../auth/auth-api.ts';
import { BrandMark, PRODUCT_NAME } from '../components/BrandMark.tsx';
import { showToast } from '../components/toaster.ts';

export const RESET_REDIRECT_DELAY_MS = 3000;
const MISSING_TOKEN_MESSAGE = 'Invalid or missing reset token';
const INVALID_TOKEN_MESSAGE = 'Invalid reset token';
const MISMATCH_MESSAGE = 'Passwords do not match';

export function ResetPasswordPage() {
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token') ?? '';
  const [succeeded, setSucceeded] = useState(false);
  return (
    <div className="app-auth-page">
      <Link to="/" className="app-auth-brand" aria-label={`${PRODUCT_NAME} home`}><BrandMark /></Link>
      <Card elevation={2} className="app-auth-card">
        {succeeded ? <ResetSucceeded /> : <ResetForm token={token} onSuccess={() => setSucceeded(true)} />}
      </Card>
    </div>
  );
}

function ResetSucceeded() {
  const navigate = useNavigate();
  useEffect(() => {
    const timer = window.setTimeout(() => navigate('/login'), RESET_REDIRECT_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [navigate]);
  return (
    <div className="app-reset-success">
      <Icon icon="tick-circle" size={48} intent={Intent.SUCCESS} />
      <H3>Password Reset Successful</H3>
      <p className={Classes.TEXT_MUTED}>Your password has been changed. You will be redirected to the login page in 3 seconds.</p>
      <Button intent={Intent.PRIMARY} size="large" text="Go to Login" onClick={() => navigate('/login')} />
    </div>
  );
}

export function RequirementList({ result }: { result: PasswordRuleResult }) {
  return (
    <ul className="app-password-rules" aria-label="Password requirements">
      {(Object.keys(PASSWORD_RULE_LABELS) as (keyof PasswordRuleResult)[]).map((rule) => (
        <li key={rule} className={result[rule] ? 'app-rule-met' : 'app-rule-unmet'} data-met={result[rule]}>
          <Icon icon={result[rule] ? 'tick-circle' : 'circle'} size={14} intent={result[rule] ? Intent.SUCCESS : Intent.NONE} />
          <span>{PASSWORD_RULE_LABELS[rule]}</span>
        </li>
      ))}
    </ul>
  );
}

function ResetForm({ token, onSuccess }: { token: string; onSuccess: () => void }) {
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const rules = checkPassword(password);
  const passwordValid = isPasswordValid(password);
  const matches = confirmation.length > 0 && password === confirmation;
  const mismatch = confirmation.length > 0 && password !== confirmation;
  const canSubmit = !busy && Boolean(token) && passwordValid && matches;

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!token) return setError(INVALID_TOKEN_MESSAGE);
    if (password !== confirmation) return setError(MISMATCH_MESSAGE);
    if (!passwordValid) return setError(PASSWORD_REQUIREMENTS_MESSAGE);
    setBusy(true);
    setError(null);
    try {
      await resetPasswordRequest(token, password);
      showToast({ title: 'Password Reset Successful', message: 'You can now log in with your new password.', intent: 'success' });
      onSuccess();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : 'Failed to reset password');
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="reset-title">
      <H3 className="app-auth-title" id="reset-title">Reset Password</H3>
      <p className={`${Classes.TEXT_MUTED} app-auth-subtitle`}>Choose a new password for your account.</p>
      {!token ? <Callout intent={Intent.DANGER} icon="error" className="app-auth-callout">{MISSING_TOKEN_MESSAGE}</Callout> : null}
      {error ? <Callout intent={Intent.DANGER} icon="error" className="app-auth-callout" role="alert">{error}</Callout> : null}
      <FormGroup label="New Password" labelFor="new-password">
        <InputGroup id="new-password" type="password" autoComplete="new-password" leftIcon="lock" size="large"
          value={password} onValueChange={setPassword} disabled={busy}
          intent={password && !passwordValid ? Intent.DANGER : Intent.NONE} data-valid={passwordValid} />
      </FormGroup>
      <RequirementList result={rules} />
      <FormGroup label="Confirm New Password" labelFor="confirm-password"
        helperText={matches
          ? <span className="app-match app-match-ok"><Icon icon="tick" size={12} /> Passwords match</span>
          : mismatch ? <span className="app-match app-match-bad"><Icon icon="cross" size={12} /> {MISMATCH_MESSAGE}</span> : undefined}>
        <InputGroup id="confirm-password" type="password" autoComplete="new-password" leftIcon="lock" size="large"
          value={confirmation} onValueChange={setConfirmation} disabled={busy}
          intent={mismatch ? Intent.DANGER : matches ? Intent.SUCCESS : Intent.NONE} />
      </FormGroup>
      <Button type="submit" intent={Intent.PRIMARY} size="large" fill disabled={!canSubmit} loading={busy} text="Reset Password" />
      <div className="app-auth-footer-link">
        <Link to="/login"><Icon icon="arrow-left" size={12} /> Back to Login</Link>
      </div>
    </form>
  );
}
