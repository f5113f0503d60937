// Finds text PostgreSQL cannot store: a U+0000 anywhere in a request body's strings or keys.

/** The dotted path (`metadata.tier`, `events.1`) of the first string or key holding U+0000, or null. */
export function findNulCharacter(value: unknown, path: string[] = []): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || 'body' : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key].join('.');
    const found = findNulCharacter(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}
