// The one Ajv set-up for the spec's schemas (JSON Schema 2020-12 with formats), shared by the request
// validation of openapi-backend, the code generator and the conformance check. `ajv/dist/2020` is
// the entry point Ajv's documentation gives for the 2020-12 dialect, not an internal file.
import Ajv2020, { type Options } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** An Ajv instance for the spec's dialect. */
export type SpecAjv = InstanceType<typeof Ajv2020.default>;

/**
 * A new Ajv 2020-12 instance with the string formats the spec uses (uuid, date-time, email, uri...).
 * Schemas are not checked against the meta-schema (the spec is linted by 3.1-aware tools instead) and
 * unknown keywords such as `example` are allowed. `options` are added on top; never throws.
 */
export function createSpecAjv(options: Options = {}): SpecAjv {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateSchema: false, ...options });
  addFormats.default(ajv);
  return ajv;
}
