/**
 * X.509 user certificates of OPC UA connections, read with node:crypto: what a stored certificate says
 * (answered beside the connection so an admin can tell which one is set), the problem with a
 * certificate and private key pasted together (checked by the api on save), and the DER form the
 * connector sends in its identity token. The private key never leaves these functions: messages name
 * what is wrong, never what was given.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { INTEGRATION_MESSAGES, type OpcuaUserCertificate } from '../integrations.ts';

const CERTIFICATE_PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

function parseCertificate(pem: string): X509Certificate | null {
  // X509Certificate also takes DER and skips text around a PEM block; only a PEM block is accepted.
  if (!CERTIFICATE_PEM.test(pem)) return null;
  try {
    return new X509Certificate(pem);
  } catch {
    return null;
  }
}

const isoDate = (text: string) => new Date(text).toISOString();

/** What the certificate says, or null when the text is not a certificate. */
export function describeUserCertificate(pem: string): OpcuaUserCertificate | null {
  const certificate = parseCertificate(pem);
  if (!certificate) return null;
  return {
    // node:crypto writes one attribute a line; one line reads better in a list.
    subject: certificate.subject.split('\n').join(', '),
    issuer: certificate.issuer.split('\n').join(', '),
    thumbprint: certificate.fingerprint.replaceAll(':', '').toLowerCase(),
    not_before: isoDate(certificate.validFrom),
    not_after: isoDate(certificate.validTo),
  };
}

/** The first certificate of the PEM in DER, as an X509IdentityToken carries it. */
export function userCertificateDer(pem: string): Buffer {
  const certificate = parseCertificate(pem);
  if (!certificate) throw new Error(INTEGRATION_MESSAGES.userCertificateInvalid);
  return certificate.raw;
}

/** The problem with a certificate alone: not a PEM certificate, not RSA, or (when `checkValidity`) outside its validity now. */
export function userCertificateProblem(pem: string, options: { checkValidity: boolean; nowMs?: number }): string | null {
  const certificate = parseCertificate(pem);
  if (!certificate) return INTEGRATION_MESSAGES.userCertificateInvalid;
  const type = certificate.publicKey.asymmetricKeyType ?? 'unknown';
  if (type !== 'rsa') return INTEGRATION_MESSAGES.userCertificateNotRsa(type.toUpperCase());
  if (options.checkValidity) {
    const now = options.nowMs ?? Date.now();
    if (new Date(certificate.validTo).getTime() < now) return INTEGRATION_MESSAGES.userCertificateExpired(isoDate(certificate.validTo));
    if (new Date(certificate.validFrom).getTime() > now) return INTEGRATION_MESSAGES.userCertificateNotYetValid(isoDate(certificate.validFrom));
  }
  return null;
}

function parsePrivateKey(pem: string): KeyObject | string {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem)) return INTEGRATION_MESSAGES.privateKeyEncrypted;
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(pem)) return INTEGRATION_MESSAGES.privateKeyInvalid;
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return INTEGRATION_MESSAGES.privateKeyInvalid;
  }
}

/** The problem with a certificate and its private key as a pair, or null when the key signs for the certificate. */
export function userCertificatePairProblem(certificatePem: string, privateKeyPem: string, options: { checkValidity: boolean; nowMs?: number }): string | null {
  const certificateProblem = userCertificateProblem(certificatePem, options);
  if (certificateProblem) return certificateProblem;
  const key = parsePrivateKey(privateKeyPem);
  if (typeof key === 'string') return key;
  return parseCertificate(certificatePem)!.checkPrivateKey(key) ? null : INTEGRATION_MESSAGES.privateKeyMismatch;
}
