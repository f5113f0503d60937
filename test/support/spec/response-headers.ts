// The response headers the spec marks `required: true` for an operation's status: what every such
// answer of the app must carry.
import { resolve, type Schema, type SpecDocument } from '../../../src/conformance/spec/document.js';

/** The lower-case names of the required headers of `status` (or its `4XX`-style range) for the operation at `path`/`method`. */
export function requiredResponseHeaders(
  document: SpecDocument,
  path: string,
  method: string,
  status: number,
): string[] {
  const operation = resolve(document, document.paths?.[path])?.[method.toLowerCase()] as Schema | undefined;
  const responses = (operation?.responses ?? {}) as Record<string, unknown>;
  const raw = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
  if (raw === undefined) return [];
  const headers = (resolve(document, raw).headers ?? {}) as Record<string, unknown>;
  return Object.entries(headers)
    .filter(([, header]) => resolve(document, header).required === true)
    .map(([name]) => name.toLowerCase());
}
