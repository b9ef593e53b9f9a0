/** The route table of spec/02 §2: public pages, guarded pages inside the shell, redirects, not-found. */
import { Navigate, type RouteObject } from 'react-router-dom';
import { CompareRunsPage } from '../compare/CompareRunsPage.tsx';
import { DashboardPage } from '../dashboard/DashboardPage.tsx';
import { DataManagementPage } from '../data/DataManagementPage.tsx';
import { LandingPage } from '../landing/LandingPage.tsx';
import { PrivacyPolicyPage } from '../legal/PrivacyPolicyPage.tsx';
import { TermsOfServicePage } from '../legal/TermsOfServicePage.tsx';
import { LoginPage } from '../login/LoginPage.tsx';
import { ResetPasswordPage } from '../reset-password/ResetPasswordPage.tsx';
import { RunDetailPage } from '../runs/RunDetailPage.tsx';
import { RunsOverviewPage } from '../runs/RunsOverviewPage.tsx';
import { SettingsPage } from '../settings/SettingsPage.tsx';
import { UnitOperationDetailPage } from '../unit-operations/UnitOperationDetailPage.tsx';
import { NotFoundPage } from './NotFoundPage.tsx';
import { ProtectedLayout } from './ProtectedLayout.tsx';
import { UnexpectedErrorPage } from './UnexpectedErrorPage.tsx';

export const routes: RouteObject[] = [
  {
    errorElement: <UnexpectedErrorPage />,
    children: [
      { path: '/', element: <LandingPage /> },
      { path: '/inlog', element: <Navigate to="/login" replace /> },
      { path: '/login', element: <LoginPage /> },
      { path: '/reset-password', element: <ResetPasswordPage /> },
      { path: '/terms-of-service', element: <TermsOfServicePage /> },
      { path: '/privacy-policy', element: <PrivacyPolicyPage /> },
      {
        element: <ProtectedLayout />,
        children: [
          { path: '/dashboard', element: <DashboardPage /> },
          { path: '/runs', element: <Navigate to="/runs/overview" replace /> },
          { path: '/runs/overview', element: <RunsOverviewPage /> },
          { path: '/runs/compare', element: <CompareRunsPage /> },
          { path: '/runs/:runId', element: <RunDetailPage /> },
          { path: '/runs/:runId/unit-operations/:unitOpId', element: <UnitOperationDetailPage /> },
          { path: '/data', element: <DataManagementPage /> },
          { path: '/settings', element: <SettingsPage /> },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
