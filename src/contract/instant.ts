// The instant a date-time field or parameter names. The spec's `date-time` format lets through values
// no stored timestamp should hold: a leap second (no Date holds it), an offset PostgreSQL refuses
// (beyond ±15:59), or a moment whose UTC year has five digits (9999-12-31T23:59-14:00), which would be
// served back in a form the format does not allow.
import { invalidField } from '../errors.js';

const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** The instant `value` names, in UTC; invalid_request naming `param` when it is not one a timestamp may hold. */
export function instantOf(param: string, value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalidField(param, 'must be a date-time such as 2026-11-21T09:30:00Z');
  if (at.getTime() < FIRST_INSTANT || at.getTime() > LAST_INSTANT)
    throw invalidField(param, 'must fall in the years 0000 to 9999 once turned to UTC');
  return at;
}
