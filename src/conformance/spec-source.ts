// Where a run takes the spec from: the deployment's published document (`<root>/openapi.json`), or a
// file or URL the caller names, for a deployment behind a proxy that does not pass the published
// document through (Prism answers 404 to paths the spec does not declare).
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import type { SpecDocument } from './spec/document.js';

/** The API root requests go to and the spec they are judged by. */
export interface SpecSource {
  apiRoot: string;
  document: SpecDocument;
}

/** Finds the published spec at `<root>/openapi.json` (outside the contract, so plain fetch), trying the service root's /api/v1 too. */
async function publishedSpec(baseUrl: string): Promise<SpecSource> {
  for (const apiRoot of [baseUrl, `${baseUrl}/api/v1`]) {
    const response = await fetch(`${apiRoot}/openapi.json`).catch(() => undefined);
    if (response?.ok) return { apiRoot, document: (await response.json()) as SpecDocument };
  }
  throw new Error(
    `no spec found at ${baseUrl}/openapi.json or ${baseUrl}/api/v1/openapi.json (give it with --spec FILE or URL)`,
  );
}

/** Reads a spec (JSON or YAML) from an http(s) URL or a file. */
async function namedSpec(spec: string): Promise<SpecDocument> {
  let text: string;
  if (/^https?:\/\//i.test(spec)) {
    const response = await fetch(spec).catch((error: Error) => {
      throw new Error(`the spec at ${spec} could not be fetched: ${error.message}`);
    });
    if (!response.ok) throw new Error(`the spec at ${spec} answered ${response.status}`);
    text = await response.text();
  } else {
    text = await readFile(spec, 'utf8').catch((error: Error) => {
      throw new Error(`the spec file ${spec} could not be read: ${error.message}`);
    });
  }
  const document = parse(text) as unknown;
  if (!document || typeof document !== 'object' || !('paths' in document))
    throw new Error(`${spec} is not an OpenAPI document (no paths)`);
  return document as SpecDocument;
}

/**
 * The spec and API root of a run: with `spec` (a file or URL) that document, `baseUrl` being the
 * API root as given; without it, the document the deployment publishes.
 */
export async function loadSpec(baseUrl: string, spec?: string): Promise<SpecSource> {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return spec === undefined ? publishedSpec(trimmed) : { apiRoot: trimmed, document: await namedSpec(spec) };
}
