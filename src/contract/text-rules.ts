// The spec's conventions for values its schemas cannot express: text PostgreSQL cannot store as sent
// (U+0000, and unpaired UTF-16 surrogates, which are refused in jsonb and silently turned into U+FFFD in
// text), numbers JSON cannot carry back (1e400 parses to Infinity, stored as null), and keys named
// `__proto__`, which JavaScript code could mistake for an object's prototype.

/** Where the first unstorable value is (`metadata.tier`, `events.1`, or `body`) and what is wrong with it. */
export interface UnstorableValue {
  path: string;
  problem: string;
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a piece of text the database cannot store as sent, or null. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the character U+0000';
  if (UNPAIRED_SURROGATE.test(text)) return 'must not contain unpaired UTF-16 surrogates (U+D800 to U+DFFF)';
  return null;
}

/** The first string, key or number of a parsed body that cannot be accepted as sent, or null. */
export function findUnstorableValue(value: unknown, path: string[] = []): UnstorableValue | null {
  const here = () => path.join('.') || 'body';
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path: here(), problem } : null;
  }
  if (typeof value === 'number')
    return Number.isFinite(value) ? null : { path: here(), problem: 'must be a finite number' };
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const problem = key === '__proto__' ? 'is a reserved key name and is not accepted' : textProblem(key);
    if (problem) return { path: [...path, key].join('.'), problem };
    const found = findUnstorableValue(item, [...path, key]);
    if (found) return found;
  }
  return null;
}
