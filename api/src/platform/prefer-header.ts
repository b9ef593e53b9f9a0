/**
 * Whether a Prefer request header (RFC 7240) asks for `return=minimal`: preferences are
 * comma-separated, each may carry parameters after `;` and a quoted value; names are
 * case-insensitive, and what is not understood is ignored.
 */
export function prefersMinimalReturn(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((preference) => {
    const [name, value] = (preference.split(';')[0] ?? '').split('=').map((part) => part.trim());
    return name?.toLowerCase() === 'return' && value?.replace(/^"(.*)"$/, '$1').toLowerCase() === 'minimal';
  });
}
