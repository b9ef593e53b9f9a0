/**
 * The route table: public pages, guarded pages inside the shell, redirects, not-found.
 * Pages are loaded on first visit (route-level code splitting), so the sign-in page does not wait
 * for the charting code and the landing page does not wait for the data pages.
 */
import type { ComponentType } from 'react';
import { Navigate, type RouteObject } from 'react-router-dom';
import { LoginPage } from '../login/LoginPage.tsx';
import { NotFoundPage } from './NotFoundPage.tsx';
import { ProtectedLayout } from './ProtectedLayout.tsx';
import { UnexpectedErrorPage } from './UnexpectedErrorPage.tsx';
import { LoadingScreen } from '../components/LoadingScreen.tsx';

/** A route's `lazy` loader for a module's named page component. */
function page<Module>(load: () => Promise<Module>, pick: (module: Module) => ComponentType) {
  return async () => ({ Component: pick(await load()) });
}

export const routes: RouteObject[] = [
  {
    errorElement: <UnexpectedErrorPage />,
    // Shown while the first page's code loads, before anything else can render.
    hydrateFallbackElement: <LoadingScreen />,
    children: [
      { path: '/', lazy: page(() => import('../landing/LandingPage.tsx'), (m) => m.LandingPage) },
      { path: '/inlog', element: <Navigate to="/login" replace /> },
      { path: '/login', element: <LoginPage /> },
      { path: '/reset-password', lazy: page(() => import('../reset-password/ResetPasswordPage.tsx'), (m) => m.ResetPasswordPage) },
      { path: '/accept-invitation', lazy: page(() => import('../accept-invitation/AcceptInvitationPage.tsx'), (m) => m.AcceptInvitationPage) },
      { path: '/terms-of-service', lazy: page(() => import('../legal/TermsOfServicePage.tsx'), (m) => m.TermsOfServicePage) },
      { path: '/privacy-policy', lazy: page(() => import('../legal/PrivacyPolicyPage.tsx'), (m) => m.PrivacyPolicyPage) },
      {
        element: <ProtectedLayout />,
        children: [
          { path: '/dashboard', lazy: page(() => import('../dashboard/DashboardPage.tsx'), (m) => m.DashboardPage) },
          { path: '/runs', element: <Navigate to="/runs/overview" replace /> },
          { path: '/runs/overview', lazy: page(() => import('../runs/RunsOverviewPage.tsx'), (m) => m.RunsOverviewPage) },
          { path: '/runs/compare', lazy: page(() => import('../compare/CompareRunsPage.tsx'), (m) => m.CompareRunsPage) },
          { path: '/runs/:runId', lazy: page(() => import('../runs/RunDetailPage.tsx'), (m) => m.RunDetailPage) },
          {
            path: '/runs/:runId/unit-operations/:unitOpId',
            lazy: page(() => import('../unit-operations/UnitOperationDetailPage.tsx'), (m) => m.UnitOperationDetailPage),
          },
          { path: '/analyze', lazy: page(() => import('../analyze/AnalyzePage.tsx'), (m) => m.AnalyzePage) },
          { path: '/alerts', lazy: page(() => import('../alerts/AlertsPage.tsx'), (m) => m.AlertsPage) },
          { path: '/data', lazy: page(() => import('../data/DataManagementPage.tsx'), (m) => m.DataManagementPage) },
          { path: '/integrations', lazy: page(() => import('../integrations/IntegrationsPage.tsx'), (m) => m.IntegrationsPage) },
          { path: '/settings', lazy: page(() => import('../settings/SettingsPage.tsx'), (m) => m.SettingsPage) },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
