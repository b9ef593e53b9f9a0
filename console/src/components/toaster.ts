/**
 * App-wide toasts: one at a time, shown for 5000 ms, dismissed by a
 * 50 px horizontal swipe, and F8 moves focus to the toast viewport (keyboard users reach it without
 * hunting for it).
 */
import { createElement } from 'react';
import { OverlayToaster, Position, type Intent, type Toaster } from '@blueprintjs/core';

export const TOAST_TIMEOUT_MS = 5000;
export const TOAST_LIMIT = 1;
export const TOAST_SWIPE_THRESHOLD_PX = 50;
export const TOAST_HOTKEY = 'F8';

export type ToastIntent = 'success' | 'danger' | 'warning' | 'primary' | 'none';

export interface ToastInput {
  title: string;
  message?: string;
  intent?: ToastIntent;
}

const ICONS: Record<ToastIntent, 'tick-circle' | 'error' | 'warning-sign' | 'info-sign' | undefined> = {
  success: 'tick-circle',
  danger: 'error',
  warning: 'warning-sign',
  primary: 'info-sign',
  none: undefined,
};

let toasterPromise: Promise<Toaster> | null = null;
let viewport: HTMLElement | null = null;
let currentKey: string | null = null;

function toaster(): Promise<Toaster> {
  if (!toasterPromise) {
    viewport = document.createElement('div');
    viewport.className = 'app-toast-viewport';
    viewport.setAttribute('role', 'region');
    viewport.setAttribute('aria-label', `Notifications (${TOAST_HOTKEY})`);
    viewport.tabIndex = -1;
    document.body.appendChild(viewport);
    installSwipeToDismiss(viewport);
    toasterPromise = OverlayToaster.create({ position: Position.TOP, maxToasts: TOAST_LIMIT }, { container: viewport });
  }
  return toasterPromise;
}

function installSwipeToDismiss(element: HTMLElement): void {
  let startX: number | null = null;
  element.addEventListener('pointerdown', (event) => {
    startX = event.clientX;
  });
  element.addEventListener('pointerup', (event) => {
    if (startX !== null && Math.abs(event.clientX - startX) >= TOAST_SWIPE_THRESHOLD_PX && currentKey) {
      void toaster().then((instance) => currentKey && instance.dismiss(currentKey));
    }
    startX = null;
  });
}

/**
 * Focuses the toast viewport on F8; installed once by the app root. The viewport itself, not a toast:
 * a toast being replaced or timing out leaves the page and would take the focus with it (the newest
 * toast is not even last in the DOM: Blueprint puts it first). From the viewport, Tab reaches the
 * toast's controls.
 */
export function installToastHotkey(target: Window = window): () => void {
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== TOAST_HOTKEY) return;
    event.preventDefault();
    viewport?.focus();
  };
  target.addEventListener('keydown', onKeyDown);
  return () => target.removeEventListener('keydown', onKeyDown);
}

export function showToast({ title, message, intent = 'none' }: ToastInput): void {
  void toaster().then((instance) => {
    // One at a time: a new toast replaces the visible one instead of queueing behind it (the
    // stylesheet hides a replaced toast at once rather than fading it out next to its successor).
    instance.clear();
    currentKey = instance.show({
      intent: intent as Intent,
      icon: ICONS[intent],
      timeout: TOAST_TIMEOUT_MS,
      message: createElement('div', { className: 'app-toast', 'data-testid': 'toast' },
        createElement('div', { className: 'app-toast-title' }, title),
        message ? createElement('div', { className: 'app-toast-message' }, message) : null),
      onDismiss: () => {
        currentKey = null;
      },
    });
  });
}
