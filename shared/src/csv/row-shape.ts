/** Rows padded or truncated to the header width. */

/** Pads with '' (a missing value) or truncates, in place for speed; returns the same array. */
export function fitRowToWidth(row: string[], width: number): string[] {
  if (row.length > width) {
    row.length = width;
  } else {
    while (row.length < width) row.push('');
  }
  return row;
}
