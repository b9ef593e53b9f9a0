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

/**
 * Truncates a row wider than `width`, in place, and leaves a shorter one as it is: readers of many
 * rows use this (a cell past a row's end is a missing value), since padding every short row to the
 * header's width costs rows x width however small the file.
 */
export function truncateRowToWidth(row: string[], width: number): string[] {
  if (row.length > width) row.length = width;
  return row;
}
