/**
 * /accept-invitation?token=...: the page the invitation mail links to. It shows the organisation, the
 * role and the address; the invitee chooses their name and password, which creates their account in
 * that organisation and signs them in. An address that already has an account cannot accept: the page
 * says so, and what to do, to the invitee only (the inviter never learns it).
 */
import { Button, Callout, Card, Classes, FormGroup, H3, Icon, InputGroup, Intent, Spinner } from '@blueprintjs/core';
import { INVITATION_MESSAGES, type InvitationPreview } from '@bioprocess/shared/auth-contracts';
import { checkPassword, isPasswordValid, PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { saveSession } from '../auth/session-store.ts';
import { BrandMark, PRODUCT_NAME } from '../components/BrandMark.tsx';
import { showToast } from '../components/toaster.ts';
import { RequirementList } from '../reset-password/ResetPasswordPage.tsx';
import { acceptInvitation, ACCEPT_FAILED, InvitationError, lookupInvitation } from './invitation-api.ts';

const MISMATCH_MESSAGE = 'Passwords do not match';

type Lookup = { state: 'loading' } | { state: 'invalid'; message: string } | { state: 'ready'; invitation: InvitationPreview };

export function AcceptInvitationPage() {
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token') ?? '';
  const [lookup, setLookup] = useState<Lookup>(token ? { state: 'loading' } : { state: 'invalid', message: INVITATION_MESSAGES.invalidToken });
  const [accountExists, setAccountExists] = useState(false);

  useEffect(() => {
    if (!token) return;
    let current = true;
    lookupInvitation(token).then(
      (invitation) => {
        if (!current) return;
        setLookup({ state: 'ready', invitation });
        setAccountExists(invitation.account_exists);
      },
      (error: unknown) => { if (current) setLookup({ state: 'invalid', message: error instanceof Error ? error.message : ACCEPT_FAILED }); },
    );
    return () => { current = false; };
  }, [token]);

  return (
    <div className="app-auth-page">
      <Link to="/" className="app-auth-brand" aria-label={`${PRODUCT_NAME} home`}><BrandMark /></Link>
      <Card elevation={2} className="app-auth-card">
        <H3 className="app-auth-title" id="accept-title">Accept Invitation</H3>
        {lookup.state === 'loading' ? <Spinner size={28} /> : null}
        {lookup.state === 'invalid' ? <Callout intent={Intent.DANGER} icon="error" className="app-auth-callout" role="alert">{lookup.message}</Callout> : null}
        {lookup.state === 'ready' ? (
          <>
            <p className={`${Classes.TEXT_MUTED} app-auth-subtitle`} data-testid="invitation-offer">
              You are invited to join <strong>{lookup.invitation.organization_name}</strong> as <strong>{lookup.invitation.role}</strong> with{' '}
              <strong>{lookup.invitation.email}</strong>.
            </p>
            {accountExists
              ? <AccountExists />
              : <AcceptForm token={token} onAccountExists={() => setAccountExists(true)} />}
          </>
        ) : null}
        <div className="app-auth-footer-link">
          <Link to="/login"><Icon icon="arrow-left" size={12} /> Back to Login</Link>
        </div>
      </Card>
    </div>
  );
}

function AccountExists() {
  return (
    <Callout intent={Intent.WARNING} icon="info-sign" className="app-auth-callout" role="alert" title="This address already has an account" data-testid="invitation-account-exists">
      {INVITATION_MESSAGES.accountExists}
    </Callout>
  );
}

function AcceptForm({ token, onAccountExists }: { token: string; onAccountExists: () => void }) {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const passwordValid = isPasswordValid(password);
  const matches = confirmation.length > 0 && password === confirmation;
  const mismatch = confirmation.length > 0 && password !== confirmation;
  const canSubmit = !busy && name.trim().length > 0 && passwordValid && matches;

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!name.trim()) return setError('Name is required');
    if (password !== confirmation) return setError(MISMATCH_MESSAGE);
    if (!passwordValid) return setError(PASSWORD_REQUIREMENTS_MESSAGE);
    setBusy(true);
    setError(null);
    try {
      const session = await acceptInvitation(token, name.trim(), password);
      saveSession(session.token, session.user);
      showToast({ title: 'Welcome', message: 'Your account was created and you are signed in.', intent: 'success' });
      navigate('/dashboard', { replace: true });
    } catch (failure) {
      if (failure instanceof InvitationError && failure.accountExists) onAccountExists();
      else setError(failure instanceof Error ? failure.message : ACCEPT_FAILED);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-labelledby="accept-title">
      {error ? <Callout intent={Intent.DANGER} icon="error" className="app-auth-callout" role="alert">{error}</Callout> : null}
      <FormGroup label="Your name" labelFor="invitee-name">
        <InputGroup id="invitee-name" autoComplete="name" leftIcon="person" size="large" value={name} onValueChange={setName} disabled={busy} autoFocus />
      </FormGroup>
      <FormGroup label="Password" labelFor="invitee-password">
        <InputGroup id="invitee-password" type="password" autoComplete="new-password" leftIcon="lock" size="large"
          value={password} onValueChange={setPassword} disabled={busy} intent={password && !passwordValid ? Intent.DANGER : Intent.NONE} />
      </FormGroup>
      <RequirementList result={checkPassword(password)} />
      <FormGroup label="Confirm Password" labelFor="invitee-confirm-password"
        helperText={mismatch ? <span className="app-match app-match-bad"><Icon icon="cross" size={12} /> {MISMATCH_MESSAGE}</span> : undefined}>
        <InputGroup id="invitee-confirm-password" type="password" autoComplete="new-password" leftIcon="lock" size="large"
          value={confirmation} onValueChange={setConfirmation} disabled={busy} intent={mismatch ? Intent.DANGER : matches ? Intent.SUCCESS : Intent.NONE} />
      </FormGroup>
      <Button type="submit" intent={Intent.PRIMARY} size="large" fill disabled={!canSubmit} loading={busy} text="Accept and Create Account" />
    </form>
  );
}
