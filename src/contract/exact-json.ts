// JSON text parsed without silently changing numbers. JavaScript numbers are IEEE doubles: a value such
// as 9007199254740993, 123456789012345678901234567890 or 0.1000000000000000055511151231257827 would
// come back as another number, and -0 as 0. The API refuses such a number instead of storing what the
// client did not send. A number passes when the double it becomes reads back as the same decimal
// (`1e2` and `100`, `0.10` and `0.1` are the same number); its source text comes from the reviver's
// source access of JSON.parse (Node 22 and later).

/** Where a number that would not read back as written was found, and its text. */
export interface InexactNumber {
  /** The field path in the API's style: `metadata.amount`, `items.2`. */
  path: string;
  source: string;
}

/** Stands in for an inexact number during the parse, so that its path can be found afterwards. */
const INEXACT = Symbol('inexact number');

interface Marker {
  [INEXACT]: string;
}

/** A decimal's sign, significant digits (no leading or trailing zeros) and the exponent of its last digit. */
function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return { negative: false, digits: '', exponent: Number.NaN };
  const [, sign, whole, fraction = '', power = '0'] = match;
  let digits = `${whole}${fraction}`;
  let exponent = Number(power) - fraction.length;
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing).replace(/^0+/, '');
  exponent += trailing;
  if (digits === '') return { negative: sign === '-', digits: '0', exponent: 0 };
  return { negative: sign === '-', digits, exponent };
}

/** Whether the double `value` reads back as the decimal written as `source` (-0 never does: JSON writes 0). */
function exact(value: number, source: string): boolean {
  // Infinity (1e400) is refused later as a number JSON cannot carry, with its own message.
  if (!Number.isFinite(value)) return true;
  if (Object.is(value, -0)) return false;
  // The shortest decimal that gives the double back; an exact source has the same digits and exponent.
  const written = decimalParts(source);
  const held = decimalParts(String(value).replace(/e\+?/, 'e'));
  return (
    written.negative === held.negative &&
    written.digits === held.digits &&
    (written.digits === '0' || written.exponent === held.exponent)
  );
}

function isMarker(value: unknown): value is Marker {
  return typeof value === 'object' && value !== null && INEXACT in value;
}

function findMarker(value: unknown, path: string[]): InexactNumber | null {
  if (isMarker(value)) return { path: path.join('.'), source: value[INEXACT] };
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, child] of Object.entries(value)) {
    const found = findMarker(child, [...path, key]);
    if (found) return found;
  }
  return null;
}

/**
 * Parses `text` as JSON. Returns the value, and the first number (in document order) that would not
 * come back as written, with its path, or null. Infinite numbers (1e400) pass: the service's check of
 * storable values refuses them. Throws SyntaxError for text that is not JSON.
 */
export function parseExactJson(text: string): { value: unknown; inexact: InexactNumber | null } {
  let seen = false;
  let value: unknown;
  try {
    value = JSON.parse(text, (_key, parsed: unknown, context?: { source?: string }) => {
      if (typeof parsed !== 'number' || context?.source === undefined || exact(parsed, context.source)) return parsed;
      seen = true;
      return { [INEXACT]: context.source } satisfies Marker;
    });
  } catch (error) {
    // A reviver recurses: nesting thousands deep overflows the stack, where JSON.parse alone does not.
    // Such a body is refused by the schema (nothing the API takes nests that deep), naming its field.
    if (!(error instanceof RangeError)) throw error;
    return { value: JSON.parse(text) as unknown, inexact: null };
  }
  return { value, inexact: seen ? findMarker(value, []) : null };
}

/** What the API says of a number that would not come back as sent. */
export function inexactNumber(source: string): string {
  return `the number ${source} cannot be kept exactly (numbers are IEEE 754 doubles); send it as a string`;
}
