/** The product's mark and name, used in the sidebar, the landing navigation and the sign-in card. */
export const PRODUCT_NAME = 'Bioprocess Platform';

export function BrandMark({ inverted = false }: { inverted?: boolean }) {
  return (
    <span className={`app-brand${inverted ? ' app-brand-inverted' : ''}`}>
      <svg className="app-brand-logo" viewBox="0 0 32 32" aria-hidden="true">
        <rect width="32" height="32" rx="7" fill="#2D72D2" />
        <path d="M7 21c3-9 6-9 9-3s6 6 9-3" fill="none" stroke="#fff" strokeWidth="3" strokeLinecap="round" />
      </svg>
      <span className="app-brand-name">{PRODUCT_NAME}</span>
    </span>
  );
}
