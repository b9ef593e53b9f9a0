/** /privacy-policy, written for this product from its legal facts (minimum age 16, retention, breach notice). */
import { H2 } from '@blueprintjs/core';
import { Link } from 'react-router-dom';
import { publicConfig } from '../config/public-config.ts';
import { LegalLayout } from './LegalLayout.tsx';

export function PrivacyPolicyPage() {
  const email = publicConfig.contactEmail;
  return (
    <LegalLayout title="Privacy Policy" lastUpdated="September 25th, 2025">
      <p>
        This Privacy Policy explains which personal data the Bioprocess Platform processes, why, and what rights you have.
        It applies to the platform, this website and our support.
      </p>

      <H2>1. Who may use the platform</H2>
      <p>
        The platform is intended for professionals. You must be at least 16 years old to give us personal data; we do not
        knowingly process data of younger people.
      </p>

      <H2>2. Data we process</H2>
      <ul>
        <li>Account data: your name, email address, organisation, role and password (stored only as a secure hash).</li>
        <li>Usage and security data: sign-in attempts, sessions and an audit log of changes made in the platform.</li>
        <li>Billing data: the contact and invoice details of your organisation&apos;s subscription.</li>
        <li>Support data: the messages you send us and our replies.</li>
      </ul>
      <p>
        Process data your organization uploads (runs, instruments and measurements) belongs to your organization; we process it
        only on its instructions, to provide the service.
      </p>

      <H2>3. Why we process it</H2>
      <p>
        To provide and secure the platform, to bill subscriptions, to answer support requests and to meet legal obligations.
        We do not sell personal data.
      </p>

      <H2>4. Security</H2>
      <p>
        Access is limited by role-based access controls (viewer, editor, admin), every change is recorded in an audit log, data
        is encrypted in transit, and organizations are strictly separated from each other.
      </p>

      <H2>5. Retention</H2>
      <p>
        Billing records are kept for 7 years, as tax law requires. Support conversations are kept for 12 months. Account data is
        deleted after the subscription ends and the export period described in the <Link to="/terms-of-service">Terms of Service</Link> has passed.
      </p>

      <H2>6. Data breaches</H2>
      <p>
        If a breach affects your personal data, we notify the affected organizations and, where required, the supervisory
        authority within 72 hours of becoming aware of it.
      </p>

      <H2>7. Your rights</H2>
      <p>
        You can ask for access to, correction, deletion or export of your personal data, and object to or restrict its
        processing. We reply to such requests within 30 days. You can also lodge a complaint with your data protection authority.
      </p>

      <H2>8. Contact</H2>
      <p>
        Send privacy questions and requests to <a href={`mailto:${email}`}>{email}</a>.
      </p>
    </LegalLayout>
  );
}
