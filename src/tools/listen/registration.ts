// The endpoint webhook:listen registered for itself: made once through the public API, kept (id, URL
// and signing secret) in endpoint.json in the state folder at 0600, and reused on every later start.
import path from 'node:path';
import { EVENT_KINDS } from '../../../generated/events.js';
import type { components } from '../../../generated/openapi.js';
import { ApiCallError, createEndpoint, deleteEndpoint, endpointExists, type ApiAccess } from './api-client.js';
import { readStateFile, removeStateFile, writeStateFile } from './state-dir.js';

/** What is stored about the registered endpoint. */
export interface StoredEndpoint {
  api_root: string;
  id: string;
  url: string;
  secret: string;
}

/** The endpoint in use and how it came to be: reused as stored, or registered now (replacing `replaced`, if any). */
export interface EnsuredEndpoint {
  endpoint: StoredEndpoint;
  registered: boolean;
  replaced?: string;
}

/** Every kind an endpoint can subscribe to (webhook.test needs no subscription). */
export const SUBSCRIBABLE_KINDS = EVENT_KINDS.filter(
  (kind): kind is components['schemas']['SubscribableEventKind'] => kind !== 'webhook.test',
);

/** The file holding the stored endpoint in the state folder `dir`. */
export function endpointFile(dir: string): string {
  return path.join(dir, 'endpoint.json');
}

/** The stored endpoint in `dir`, or undefined when none is; throws when the file is not one this tool wrote. */
export async function readStoredEndpoint(dir: string): Promise<StoredEndpoint | undefined> {
  const text = await readStateFile(endpointFile(dir));
  if (text === undefined) return undefined;
  const stored = JSON.parse(text) as Partial<StoredEndpoint>;
  if (![stored.api_root, stored.id, stored.url, stored.secret].every((value) => typeof value === 'string')) {
    throw new Error(`${endpointFile(dir)} is not an endpoint this tool stored; remove it or run with --forget`);
  }
  return stored as StoredEndpoint;
}

/**
 * The endpoint for `url` on `access`'s API: the stored one when it still exists with that URL, else a
 * new one (the stored one, if on the same API, is deleted first). Throws ApiCallError when the API
 * refuses, or an Error when the state cannot be written.
 */
export async function ensureEndpoint(dir: string, access: ApiAccess, url: string): Promise<EnsuredEndpoint> {
  const stored = await readStoredEndpoint(dir);
  if (stored && stored.api_root === access.apiRoot && stored.url === url && (await endpointExists(access, stored.id))) {
    return { endpoint: stored, registered: false };
  }
  let replaced: string | undefined;
  if (stored && stored.api_root === access.apiRoot) {
    await deleteEndpoint(access, stored.id);
    replaced = stored.id;
  }
  const { id, secret } = await createEndpoint(access, url, SUBSCRIBABLE_KINDS);
  const endpoint: StoredEndpoint = { api_root: access.apiRoot, id, url, secret };
  await writeStateFile(endpointFile(dir), `${JSON.stringify(endpoint, null, 2)}\n`);
  return { endpoint, registered: true, ...(replaced ? { replaced } : {}) };
}

/**
 * Deletes the stored endpoint through the API the user named (`access`) and removes the stored state;
 * resolves to the deleted endpoint, or undefined when none was stored. The key goes only to that API:
 * an endpoint registered with another one is refused with ApiCallError, as is a deletion the API refuses.
 */
export async function forgetEndpoint(dir: string, access: ApiAccess): Promise<StoredEndpoint | undefined> {
  const stored = await readStoredEndpoint(dir);
  if (!stored) return undefined;
  if (stored.api_root !== access.apiRoot) {
    throw new ApiCallError(
      `the stored endpoint ${stored.id} was registered with ${stored.api_root}, not ${access.apiRoot}; pass --api-url ${stored.api_root} to delete it there`,
    );
  }
  await deleteEndpoint(access, stored.id);
  await removeStateFile(endpointFile(dir));
  return stored;
}
