// How an error message quotes the value it refused: short, in double quotes, with control and bidi
// characters written as escapes, and never for a field that may carry a credential.

/** The most characters of a refused value a message quotes; a longer one is cut and ends with "…". */
export const QUOTED_VALUE_MAX_CHARS = 40;

/** C0 and C1 controls, DEL, and the bidi controls that could reorder the text around them. */
const UNSAFE_CHARACTER = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** Field names whose values may be credentials (URLs too: their user-info or query may hold one): never echoed. */
const NOT_QUOTED_FIELD = /secret|password|passphrase|token|key|signature|auth|cookie|credential|url|uri/i;

/** The value as a message quotes it: `"0123"`, `"a very long…"`, `"\u202E"`, `3000000000`. */
export function quoteValue(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value) ?? String(value);
  const characters = [...value];
  const shown = characters.slice(0, QUOTED_VALUE_MAX_CHARS).join('');
  const escaped = shown
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(
      UNSAFE_CHARACTER,
      (character) => `\\u${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
    );
  return `"${escaped}${characters.length > QUOTED_VALUE_MAX_CHARS ? '…' : ''}"`;
}

/**
 * Whether a value found at `path` may be quoted back: not from a header (which carry keys and
 * idempotency keys), and not from a field whose name suggests a credential or a URL.
 */
export function mayQuote(location: string | undefined, path: readonly string[]): boolean {
  if (location === 'header' || location === 'cookie') return false;
  return !path.some((segment) => NOT_QUOTED_FIELD.test(segment));
}
