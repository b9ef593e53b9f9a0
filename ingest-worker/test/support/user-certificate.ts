/** OPC UA user certificates for tests, made the way an admin would with openssl. */
import { X509Certificate } from 'node:crypto';
import { crypto_utils } from 'node-opcua-client';

/** A self-signed RSA user certificate and its private key, made now; `der` is what a server's trust list holds. */
export async function makeUserCertificate(commonName: string): Promise<{ certificatePem: string; privateKeyPem: string; der: Buffer }> {
  const privateKey = await crypto_utils.generatePrivateKey(2048);
  const { privPem } = await crypto_utils.privateKeyToPEM(privateKey);
  const { cert } = await crypto_utils.createSelfSignedCertificate({
    privateKey, subject: `/CN=${commonName}/O=Bioprocess test`, notBefore: new Date(Date.now() - 60_000), validity: 30,
    purpose: crypto_utils.CertificatePurpose.ForUserAuthentication,
  });
  return { certificatePem: cert, privateKeyPem: privPem, der: new X509Certificate(cert).raw };
}
