/** /terms-of-service, written for this product from its legal facts (minimum age 18, notice periods, liability, Dutch law). */
import { H2 } from '@blueprintjs/core';
import { Link } from 'react-router-dom';
import { publicConfig } from '../config/public-config.ts';
import { LegalLayout } from './LegalLayout.tsx';

export function TermsOfServicePage() {
  const email = publicConfig.contactEmail;
  return (
    <LegalLayout title="Terms of Service" lastUpdated="September 25th, 2025">
      <p>
        These Terms of Service govern your use of the Bioprocess Platform, a web platform for collecting, storing,
        charting and sharing bioprocess data (runs, unit operations, equipment, instruments and time-series measurements).
        By creating an account or using the platform you agree to these terms on behalf of yourself and the organization you represent.
      </p>

      <H2>1. Eligibility and accounts</H2>
      <p>
        You must be at least 18 years old to use the platform. Accounts belong to an organization; its administrators decide who
        has access and with which role (viewer, editor or admin). You are responsible for keeping your credentials confidential and
        for all activity under your account.
      </p>

      <H2>2. The service</H2>
      <p>
        We provide the platform as a hosted service, including data collection from equipment, lab information systems and
        external sources, unified storage of upstream and downstream data, charts, comparisons, comments and an audit log.
        Features marked as coming soon are not part of the service until they are released.
      </p>

      <H2>3. Subscriptions and payment</H2>
      <p>
        Subscriptions are billed monthly or annually in advance, as agreed in your order. Fees are non-refundable except where
        these terms or the law say otherwise.
      </p>

      <H2>4. Your data</H2>
      <p>
        Your organization owns the data it uploads. You grant us the rights needed to host, process and display that data solely
        to provide the service. You are responsible for having the right to upload the data and for its accuracy.
      </p>

      <H2>5. Acceptable use</H2>
      <p>
        You will not attempt to access another organization&apos;s data, circumvent access controls or rate limits, interfere
        with the platform&apos;s operation, or use it for unlawful purposes.
      </p>

      <H2>6. Term and termination</H2>
      <p>
        Either party may terminate a subscription with 3 months&apos; written notice. After termination you can export your data
        for 30 days, after which we delete it, except where the law requires us to keep it.
      </p>

      <H2>7. Changes to these terms</H2>
      <p>
        We may change these terms at most once a year and will notify you at least 1 month before a change takes effect.
      </p>

      <H2>8. Liability</H2>
      <p>
        Our total liability for any claim is limited to the fees you paid in the 6 months before the event giving rise to the claim.
        For loss of data the limit is the fees paid in the 12 months before that event. Nothing in these terms limits liability
        that cannot be limited by law.
      </p>

      <H2>9. Disputes and governing law</H2>
      <p>
        These terms are governed by Dutch law. If a dispute arises, the parties will first try to settle it in good faith for
        30 days before either party starts arbitration or proceedings. The competent court in Rotterdam, the Netherlands, has
        exclusive jurisdiction.
      </p>

      <H2>10. Privacy and contact</H2>
      <p>
        How we handle personal data is described in our <Link to="/privacy-policy">Privacy Policy</Link>. Questions about these
        terms can be sent to <a href={`mailto:${email}`}>{email}</a>.
      </p>
    </LegalLayout>
  );
}
