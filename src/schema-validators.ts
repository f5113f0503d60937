// The Ajv standalone validators generated from the spec (generated/validators.cjs), loaded for ESM.
import { createRequire } from 'node:module';
import type * as Validators from '../generated/validators.js';

const require = createRequire(import.meta.url);

/** Compiled validators keyed by schema name; each returns true or sets `.errors`. */
export const schemaValidators = require('../generated/validators.cjs') as typeof Validators;

/** Formats a validator's errors as `field: message` lines (field paths with dots). */
export function describeErrors(errors: Validators.Validator<unknown>['errors']): string[] {
  return (errors ?? []).map((error) => {
    const field = error.instancePath.split('/').filter(Boolean).join('.');
    return `${field || 'row'}: ${error.message ?? 'is invalid'}`;
  });
}
