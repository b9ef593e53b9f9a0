/** Catches render errors outside the router (e.g. in providers) and shows the unexpected-error screen. */
import { Component, type ErrorInfo, type ReactNode } from 'react';
import { UnexpectedErrorScreen } from './UnexpectedErrorPage.tsx';

export class AppErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: null };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error(error, info.componentStack);
  }

  override render() {
    return this.state.error ? <UnexpectedErrorScreen error={this.state.error} /> : this.props.children;
  }
}
