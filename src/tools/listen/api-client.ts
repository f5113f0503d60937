// The few public API calls webhook:listen makes for itself: register its endpoint, check that it still
// exists, delete it. Plain fetch with the org's API key; every failure is one line naming the call.
import { isIPv4 } from 'node:net';
import type { components } from '../../../generated/openapi.js';

type SubscribableEventKind = components['schemas']['SubscribableEventKind'];

/** An API root (…/api/v1) and the key to call it with. */
export interface ApiAccess {
  apiRoot: string;
  apiKey: string;
}

/** A failed API call: the message says which call, its status and the API's error code and message. */
export class ApiCallError extends Error {
  constructor(
    message: string,
    /** The HTTP status the API answered, if it answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The API root for `url`: the service root or the API root, with /api/v1 added when missing. */
export function apiRootOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiCallError(`--api-url must be a URL, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ApiCallError(`--api-url must be an http:// or https:// URL, got "${url}"`);
  }
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    throw new ApiCallError(
      `--api-url must be https:// for a host other than this machine's loopback, got "${url}": the API key would travel unencrypted`,
    );
  }
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
}

async function call(access: ApiAccess, method: string, path: string, body?: unknown): Promise<Response> {
  try {
    return await fetch(`${access.apiRoot}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${access.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new ApiCallError(`${method} ${access.apiRoot}${path} failed: ${cause}`);
  }
}

async function failure(response: Response, what: string): Promise<ApiCallError> {
  const text = await response.text().catch(() => '');
  let detail = text.slice(0, 200);
  try {
    const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (error) detail = `${error.code ?? ''}: ${error.message ?? ''}`;
  } catch {
    // Not the API's error envelope: shown as received.
  }
  return new ApiCallError(`${what} answered ${response.status} ${detail}`.trim(), response.status);
}

/** Registers `url` for `events`; resolves to the endpoint's id and secret. Throws ApiCallError when refused. */
export async function createEndpoint(
  access: ApiAccess,
  url: string,
  events: readonly SubscribableEventKind[],
): Promise<{ id: string; secret: string }> {
  const response = await call(access, 'POST', '/webhooks', { url, events });
  if (response.status !== 201) throw await failure(response, 'POST /webhooks');
  const body = (await response.json()) as components['schemas']['WebhookSecretResponse'];
  return { id: body.data.id, secret: body.secret };
}

/** Whether the endpoint `id` still exists in the key's org. Throws ApiCallError on any answer but 200 or 404. */
export async function endpointExists(access: ApiAccess, id: string): Promise<boolean> {
  const response = await call(access, 'GET', `/webhooks/${encodeURIComponent(id)}`);
  if (response.status === 200 || response.status === 404) {
    await response.body?.cancel();
    return response.status === 200;
  }
  throw await failure(response, `GET /webhooks/${id}`);
}

/** Deletes the endpoint `id` (one already gone counts as deleted). Throws ApiCallError otherwise. */
export async function deleteEndpoint(access: ApiAccess, id: string): Promise<void> {
  const response = await call(access, 'DELETE', `/webhooks/${encodeURIComponent(id)}`);
  if (response.status === 204 || response.status === 404) {
    await response.body?.cancel();
    return;
  }
  throw await failure(response, `DELETE /webhooks/${id}`);
}

/** Whether `hostname` (as URL.hostname gives it) names this machine's loopback interface. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return isIPv4(host) && host.startsWith('127.');
}
