/** id -> name lookups with fallbacks ('Facility {id}', 'Equipment {id}', 'N/A'). */
export function nameLookup(rows: readonly { id: number; name: string }[] | undefined, fallbackLabel: string) {
  const names = new Map((rows ?? []).map((row) => [row.id, row.name]));
  return (id: number | null | undefined): string => {
    if (id === null || id === undefined) return 'N/A';
    return names.get(id) ?? `${fallbackLabel} ${id}`;
  };
}
