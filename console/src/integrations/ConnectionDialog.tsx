/**
 * Add or edit a connection: an MQTT broker (TLS, client id, credentials) or an OPC UA server (security
 * mode and policy; anonymous, user name or user certificate). The password and the certificate's
 * private key are written only: an edit leaves them as stored unless a new one is given, "Remove the
 * stored password" is ticked or the certificate is replaced.
 */
import { Callout, Checkbox, FormGroup, HTMLSelect, InputGroup, Intent, NumericInput, Switch, TextArea } from '@blueprintjs/core';
import { OPCUA_SECURITY_MODES, OPCUA_SECURITY_POLICIES, type IntegrationKind, type OpcuaUserIdentity } from '@bioprocess/shared/integrations';
import { useEffect, useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { useSettingsAction } from '../settings/use-settings-action.ts';
import { CONNECTIONS_PATH, connectionPath, type Connection } from './integration-queries.ts';
import { UserCertificateFields, type StoredUserCertificate } from './UserCertificateFields.tsx';

const MIB = 1024 * 1024;

interface Draft {
  kind: IntegrationKind;
  name: string;
  endpointUrl: string;
  username: string;
  password: string;
  removePassword: boolean;
  clientId: string;
  rejectUnauthorized: boolean;
  caPem: string;
  securityMode: string;
  securityPolicy: string;
  userIdentity: OpcuaUserIdentity;
  /** The certificate stored now, shown until Replace; null when the connection signs in otherwise. */
  storedCertificate: StoredUserCertificate | null;
  storedCertificatePem: string | null;
  replacingCertificate: boolean;
  certificatePem: string;
  privateKeyPem: string;
  enabled: boolean;
  bufferLimitMib: number;
}

function draftOf(connection: Connection | null): Draft {
  const base: Draft = {
    kind: 'opcua', name: '', endpointUrl: '', username: '', password: '', removePassword: false, clientId: '', rejectUnauthorized: true,
    caPem: '', securityMode: 'None', securityPolicy: 'None', userIdentity: 'anonymous', storedCertificate: null, storedCertificatePem: null,
    replacingCertificate: false, certificatePem: '', privateKeyPem: '', enabled: true, bufferLimitMib: 1024,
  };
  if (!connection) return base;
  const common = { ...base, kind: connection.kind, name: connection.name, endpointUrl: connection.endpointUrl, enabled: connection.enabled,
    bufferLimitMib: Math.round(connection.bufferLimitBytes / MIB), username: connection.settings.username ?? '' };
  if (connection.kind === 'mqtt') {
    return { ...common, clientId: connection.settings.clientId ?? '', rejectUnauthorized: connection.settings.tls.rejectUnauthorized, caPem: connection.settings.tls.caPem ?? '' };
  }
  const { settings } = connection;
  return {
    ...common, securityMode: settings.securityMode, securityPolicy: settings.securityPolicy, userIdentity: settings.userIdentity,
    storedCertificate: settings.userIdentity === 'certificate' ? settings.userCertificate : null,
    storedCertificatePem: settings.userIdentity === 'certificate' ? settings.userCertificatePem : null,
  };
}

const USER_IDENTITY_LABELS: Record<OpcuaUserIdentity, string> = {
  anonymous: 'Anonymous',
  username: 'Username and password',
  certificate: 'User certificate',
};

const ENDPOINT_HINTS: Record<IntegrationKind, string> = {
  mqtt: 'mqtt://broker.example:1883, or mqtts:// for TLS (port 8883).',
  opcua: 'opc.tcp://server.example:4840, as the server or its KEPServerEX lists it.',
};

export function ConnectionDialog({ connection, isOpen, onClose, onSaved }: {
  /** null adds a connection. */
  connection: Connection | null;
  isOpen: boolean;
  onClose: () => void;
  onSaved: (saved: Connection) => void | Promise<void>;
}) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(connection));
  const [error, setError] = useState<string | null>(null);
  const { busy, run } = useSettingsAction();
  useEffect(() => {
    if (isOpen) {
      setDraft(draftOf(connection));
      setError(null);
    }
  }, [isOpen, connection]);
  const set = (change: Partial<Draft>) => setDraft((current) => ({ ...current, ...change }));

  const opcuaIdentity = draft.kind === 'opcua' ? draft.userIdentity : null;
  const keepsStoredCertificate = opcuaIdentity === 'certificate' && draft.storedCertificate !== null && !draft.replacingCertificate;
  // The stored key stays for a renewed certificate only while the connection already signs in with one.
  const keyStored = draft.storedCertificate !== null && Boolean(connection?.hasSecret);
  const usesPassword = draft.kind === 'mqtt' || opcuaIdentity === 'username';

  const submit = async () => {
    if (!draft.name.trim()) return setError('Name is required.');
    if (!draft.endpointUrl.trim()) return setError('Endpoint URL is required.');
    if (opcuaIdentity === 'username' && !draft.username.trim()) return setError('Username is required to sign in with a username.');
    if (opcuaIdentity === 'certificate' && !keepsStoredCertificate) {
      if (!draft.certificatePem.trim()) return setError('Paste or load the user certificate (PEM).');
      if (!draft.privateKeyPem.trim() && !keyStored) return setError("Paste or load the certificate's private key (PEM).");
    }
    setError(null);
    const opcuaUser = opcuaIdentity === 'certificate'
      ? { username: null, user_certificate_pem: keepsStoredCertificate ? draft.storedCertificatePem : draft.certificatePem.trim() }
      : { username: opcuaIdentity === 'username' ? draft.username.trim() : null, user_certificate_pem: null };
    const settings = draft.kind === 'mqtt'
      ? { client_id: draft.clientId.trim() || null, username: draft.username.trim() || null, tls: { reject_unauthorized: draft.rejectUnauthorized, ca_pem: draft.caPem.trim() || null } }
      : { security_mode: draft.securityMode, security_policy: draft.securityPolicy, user_identity: draft.userIdentity, ...opcuaUser };
    // A secret left empty on an edit keeps the stored one; null removes it. For a certificate, the secret is its private key.
    const secret = opcuaIdentity === 'certificate'
      ? (!keepsStoredCertificate && draft.privateKeyPem.trim() ? draft.privateKeyPem : undefined)
      : usesPassword && draft.password ? draft.password : usesPassword && draft.removePassword ? null : undefined;
    const body = {
      name: draft.name.trim(), endpoint_url: draft.endpointUrl.trim(), settings, enabled: draft.enabled,
      buffer_limit_bytes: Math.round(draft.bufferLimitMib * MIB), ...(secret === undefined ? {} : { secret }),
    };
    await run(() => (connection
      ? apiRequest<Connection>('PATCH', connectionPath(connection.id), body)
      : apiRequest<Connection>('POST', CONNECTIONS_PATH, { ...body, kind: draft.kind })), {
      success: connection ? 'Connection saved' : 'Connection added',
      failure: (message) => setError(message ?? 'Failed to save the connection.'),
      then: (saved) => onSaved(saved),
    });
  };

  return (
    <FormDialog title={connection ? 'Edit Connection' : 'Add Connection'} icon="data-connection" isOpen={isOpen} onClose={onClose} onSubmit={submit} busy={busy}
      submitLabel={connection ? 'Save' : 'Add Connection'}
      description="The connector subscribes to the source and posts its readings to the mapped instruments. Passwords and private keys are stored encrypted and never shown again.">
      {connection ? null : (
        <FormGroup label="Source" labelFor="connection-kind">
          <HTMLSelect id="connection-kind" fill value={draft.kind} onChange={(event) => set({ kind: event.target.value as IntegrationKind })}>
            <option value="opcua">OPC UA server</option>
            <option value="mqtt">MQTT broker</option>
          </HTMLSelect>
        </FormGroup>
      )}
      <FormGroup label="Name" labelFor="connection-name" labelInfo="(required)">
        <InputGroup id="connection-name" value={draft.name} onChange={(event) => set({ name: event.target.value })} />
      </FormGroup>
      <FormGroup label="Endpoint URL" labelFor="connection-endpoint" labelInfo="(required)" helperText={ENDPOINT_HINTS[draft.kind]}>
        <InputGroup id="connection-endpoint" value={draft.endpointUrl} onChange={(event) => set({ endpointUrl: event.target.value })}
          placeholder={draft.kind === 'mqtt' ? 'mqtt://' : 'opc.tcp://'} />
      </FormGroup>
      {draft.kind === 'opcua' ? (
        <div className="app-integrations-form-row">
          <FormGroup label="Security mode" labelFor="connection-security-mode" className="app-settings-grow">
            <HTMLSelect id="connection-security-mode" fill value={draft.securityMode} onChange={(event) => set({ securityMode: event.target.value })}>
              {OPCUA_SECURITY_MODES.map((mode) => <option key={mode} value={mode}>{mode}</option>)}
            </HTMLSelect>
          </FormGroup>
          <FormGroup label="Security policy" labelFor="connection-security-policy" className="app-settings-grow">
            <HTMLSelect id="connection-security-policy" fill value={draft.securityPolicy} onChange={(event) => set({ securityPolicy: event.target.value })}>
              {OPCUA_SECURITY_POLICIES.map((policy) => <option key={policy} value={policy}>{policy}</option>)}
            </HTMLSelect>
          </FormGroup>
        </div>
      ) : (
        <FormGroup label="Client ID" labelFor="connection-client-id" labelInfo="(optional)"
          helperText="A stable client ID keeps the broker's persistent session, so messages sent while the connector restarts are delivered.">
          <InputGroup id="connection-client-id" value={draft.clientId} onChange={(event) => set({ clientId: event.target.value })} />
        </FormGroup>
      )}
      {draft.kind === 'opcua' ? (
        <FormGroup label="Sign in as" labelFor="connection-user-identity"
          helperText={draft.userIdentity === 'certificate' ? "The server must trust the certificate: register it in the server's trusted user certificates." : undefined}>
          <HTMLSelect id="connection-user-identity" fill value={draft.userIdentity} onChange={(event) => set({ userIdentity: event.target.value as OpcuaUserIdentity })}>
            {Object.entries(USER_IDENTITY_LABELS).map(([identity, label]) => <option key={identity} value={identity}>{label}</option>)}
          </HTMLSelect>
        </FormGroup>
      ) : null}
      {usesPassword ? (
        <div className="app-integrations-form-row">
          <FormGroup label="Username" labelFor="connection-username" labelInfo={draft.kind === 'opcua' ? '(required)' : '(optional)'} className="app-settings-grow">
            <InputGroup id="connection-username" value={draft.username} autoComplete="off" onChange={(event) => set({ username: event.target.value })} />
          </FormGroup>
          <FormGroup label="Password" labelFor="connection-password" labelInfo={connection?.hasSecret && !draft.storedCertificate ? '(stored; type to replace)' : '(optional)'} className="app-settings-grow">
            <InputGroup id="connection-password" type="password" autoComplete="new-password" value={draft.password} onChange={(event) => set({ password: event.target.value, removePassword: false })} />
          </FormGroup>
        </div>
      ) : null}
      {usesPassword && connection?.hasSecret && !draft.storedCertificate ? (
        <Checkbox label="Remove the stored password" checked={draft.removePassword} disabled={draft.password !== ''}
          onChange={(event) => set({ removePassword: event.currentTarget.checked })} />
      ) : null}
      {opcuaIdentity === 'certificate' ? (
        <UserCertificateFields stored={draft.storedCertificate} replacing={draft.replacingCertificate} keyStored={keyStored}
          certificatePem={draft.certificatePem} privateKeyPem={draft.privateKeyPem}
          onReplace={() => set({ replacingCertificate: true })}
          onKeepStored={() => set({ replacingCertificate: false, certificatePem: '', privateKeyPem: '' })}
          onChange={(change) => set(change)} />
      ) : null}
      {draft.kind === 'mqtt' ? (
        <>
          <Switch label="Verify the broker's TLS certificate (mqtts://)" checked={draft.rejectUnauthorized}
            onChange={(event) => set({ rejectUnauthorized: event.currentTarget.checked })} />
          <FormGroup label="CA certificate" labelFor="connection-ca" labelInfo="(optional, PEM)" helperText="For a broker whose certificate is signed by your own certificate authority.">
            <TextArea id="connection-ca" fill rows={3} value={draft.caPem} onChange={(event) => set({ caPem: event.target.value })} placeholder="-----BEGIN CERTIFICATE-----" />
          </FormGroup>
        </>
      ) : null}
      <div className="app-integrations-form-row">
        <FormGroup label="Buffer limit (MiB)" labelFor="connection-buffer" className="app-settings-grow"
          helperText="How much the connector may keep on its disk while the platform cannot take readings.">
          <NumericInput id="connection-buffer" fill min={1} max={1024 * 1024} value={draft.bufferLimitMib}
            onValueChange={(value) => set({ bufferLimitMib: Number.isFinite(value) ? value : 1 })} />
        </FormGroup>
        <FormGroup label="State" className="app-settings-grow">
          <Switch label="Enabled" checked={draft.enabled} onChange={(event) => set({ enabled: event.currentTarget.checked })} />
        </FormGroup>
      </div>
      {error ? <Callout intent={Intent.DANGER} compact data-testid="connection-error">{error}</Callout> : null}
    </FormDialog>
  );
}
