// ESM access to the Ajv standalone validators that `npm run gen` compiled from the spec (CommonJS).
import { createRequire } from 'node:module';
import type * as Generated from '../../generated/validators.js';
import { projectFile } from '../project-files.js';

export type { Validator } from '../../generated/validators.js';

/** Every validator generated from the spec: each event kind's envelope and headers, and the extra request bodies (scripts/gen.ts). */
export const validators = createRequire(import.meta.url)(projectFile('generated/validators.cjs')) as typeof Generated;

/** The validation errors of the last failed check as `path message` lines (`/data/status must be ...`). */
export function describeErrors(errors: Generated.Validator<unknown>['errors']): string[] {
  return (errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
}
