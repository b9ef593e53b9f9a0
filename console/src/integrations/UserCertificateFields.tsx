/**
 * The user certificate of an OPC UA connection in its form: the stored certificate as it identifies
 * itself (subject, thumbprint, expiry) with Replace, or two PEM fields, pasted or loaded from a file.
 * The private key is written only, like a password: the api never sends it back.
 */
import { Button, FileInput, FormGroup, Intent, Tag, TextArea } from '@blueprintjs/core';
import { formatDate } from '../dates/date-time-format.ts';
import type { Connection } from './integration-queries.ts';

type OpcuaSettings = Extract<Connection, { kind: 'opcua' }>['settings'];
export type StoredUserCertificate = NonNullable<OpcuaSettings['userCertificate']>;

/** A PEM file's text; certificate and key files are small, so the whole file is read. */
async function readPemFile(input: HTMLInputElement): Promise<string | null> {
  const file = input.files?.[0];
  input.value = '';
  return file ? file.text() : null;
}

function PemField({ id, label, labelInfo, helperText, placeholder, value, onChange }: {
  id: string; label: string; labelInfo: string; helperText: string; placeholder: string; value: string; onChange: (value: string) => void;
}) {
  return (
    <FormGroup label={label} labelFor={id} labelInfo={labelInfo} helperText={helperText}>
      <TextArea id={id} fill rows={3} value={value} spellCheck={false} autoComplete="off" placeholder={placeholder}
        onChange={(event) => onChange(event.target.value)} />
      <FileInput className="app-integrations-pem-file" text="Load from a file..."
        inputProps={{ id: `${id}-file`, accept: '.pem,.crt,.cer,.key,.txt', 'aria-label': `${label} file` } as React.InputHTMLAttributes<HTMLInputElement>}
        onInputChange={(event) => { void readPemFile(event.target as HTMLInputElement).then((text) => { if (text !== null) onChange(text); }); }} />
    </FormGroup>
  );
}

export function UserCertificateFields({ stored, replacing, onReplace, onKeepStored, certificatePem, privateKeyPem, keyStored, onChange }: {
  /** The certificate the connection signs in with now, when it does with one. */
  stored: StoredUserCertificate | null;
  replacing: boolean;
  onReplace: () => void;
  onKeepStored: () => void;
  certificatePem: string;
  privateKeyPem: string;
  /** The stored key can stay for a renewed certificate of the same key. */
  keyStored: boolean;
  onChange: (change: { certificatePem?: string; privateKeyPem?: string }) => void;
}) {
  if (stored && !replacing) {
    const expired = Date.parse(stored.notAfter) < Date.now();
    return (
      <FormGroup label="User certificate" labelInfo="(stored)">
        <dl className="app-settings-facts app-integrations-facts" data-testid="stored-user-certificate">
          <dt>Subject</dt><dd>{stored.subject}</dd>
          <dt>Thumbprint</dt><dd><code>{stored.thumbprint}</code></dd>
          <dt>Valid until</dt>
          <dd>{formatDate(stored.notAfter)} {expired ? <Tag intent={Intent.DANGER} minimal>Expired</Tag> : null}</dd>
        </dl>
        <Button icon="refresh" text="Replace" onClick={onReplace} />
      </FormGroup>
    );
  }
  return (
    <>
      <PemField id="connection-user-certificate" label="User certificate" labelInfo="(required, PEM)" value={certificatePem}
        helperText="The X.509 certificate registered for this user on the server." placeholder="-----BEGIN CERTIFICATE-----"
        onChange={(value) => onChange({ certificatePem: value })} />
      <PemField id="connection-private-key" label="Private key" labelInfo={keyStored ? '(stored; paste to replace)' : '(required, PEM)'} value={privateKeyPem}
        helperText="The certificate's private key, without a passphrase. It is stored encrypted and never shown again."
        placeholder="-----BEGIN PRIVATE KEY-----" onChange={(value) => onChange({ privateKeyPem: value })} />
      {stored ? <Button variant="minimal" text="Keep the stored certificate" onClick={onKeepStored} /> : null}
    </>
  );
}
