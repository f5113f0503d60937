// Turns Ajv errors from request validation into the invalid_request envelope with param and details.
import type { ErrorObject } from 'ajv';
import { DomainError } from '../errors.js';
import { messagesByField } from '../contract/validation-messages.js';

/**
 * Builds the invalid_request error for a failed validation; `param` is the first failing field.
 * `validated` is the object the errors point into, from which refused values are quoted.
 */
export function validationError(
  errors: ErrorObject[],
  headerNames: ReadonlyMap<string, string>,
  validated: unknown,
): DomainError {
  const details = messagesByField(errors, { data: validated, headerNames });
  const [param, messages] = [...details][0] ?? ['body', ['is invalid']];
  return new DomainError('invalid_request', `${param}: ${messages[0]}`, {
    param,
    details: Object.fromEntries(details),
  });
}

/**
 * The first query parameter name in `querystring` (brackets stripped) that `declared` does not hold.
 * The query parser silently drops names such as `constructor` or `__proto__`, so schema validation
 * never sees them.
 */
export function undeclaredQueryParameter(querystring: string, declared: ReadonlySet<string>): string | null {
  for (const name of new URLSearchParams(querystring).keys()) {
    const base = name.replace(/\[.*$/s, '');
    if (!declared.has(base)) return base;
  }
  return null;
}
