// Finds values a request body may not carry although its schema accepts them: text PostgreSQL cannot
// store as sent (U+0000, and unpaired UTF-16 surrogates, which are refused in jsonb and silently turned
// into U+FFFD in text) and numbers JSON cannot carry back (1e400 parses to Infinity, stored as null).

/** Where the first unstorable value is (`metadata.tier`, `events.1`, or `body`) and what is wrong with it. */
export interface UnstorableValue {
  path: string;
  problem: string;
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the character U+0000';
  if (UNPAIRED_SURROGATE.test(text)) return 'must not contain unpaired UTF-16 surrogates (U+D800 to U+DFFF)';
  return null;
}

/** The first string, key or number of a parsed body that cannot be stored as sent, or null. */
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
    const problem = textProblem(key);
    if (problem) return { path: [...path, key].join('.'), problem };
    const found = findUnstorableValue(item, [...path, key]);
    if (found) return found;
  }
  return null;
}
