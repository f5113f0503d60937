// POST /providers/{provider}/events, outside the API's contract: the raw body and headers go to the
// provider's own verification (src/calls/provider-webhooks.ts); the answer is a bare acknowledgement.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { DomainError } from '../errors.js';
import { receiveProviderWebhook } from '../calls/provider-webhooks.js';

/** The largest provider report accepted (an end-of-call report carries the whole transcript). */
const PROVIDER_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** The request's body as sent, within the size limit and `timeoutMs`; throws the envelope error otherwise. */
async function rawBody(ctx: Koa.Context, timeoutMs: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // A client that stalls loses its connection; the read below then fails.
  const timer = setTimeout(() => ctx.req.destroy(), timeoutMs);
  try {
    for await (const chunk of ctx.req.iterator({ destroyOnReturn: true })) {
      size += (chunk as Buffer).length;
      if (size > PROVIDER_BODY_LIMIT_BYTES) {
        ctx.set('Connection', 'close');
        const limit = `${PROVIDER_BODY_LIMIT_BYTES / 1024 / 1024} MiB`;
        throw new DomainError('invalid_request', `body: exceeds the ${limit} limit`, { param: 'body' });
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('invalid_request', 'body: the client stopped sending it, or took too long', {
      param: 'body',
    });
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks);
}

/** The request's headers, names in lower case, repeated ones joined as Node joins them. */
function headersOf(ctx: Koa.Context): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(ctx.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

/** Registers the provider webhook route: 200 with how many reports were taken, 401 when unsigned, 404 for no such provider. */
export function providerEventRoutes(router: Router, deps: AppDeps): void {
  router.post('/providers/:provider/events', async (ctx) => {
    const rawBodyBytes = await rawBody(ctx, deps.config.bodyTimeoutMs);
    const results = await receiveProviderWebhook(deps, ctx.params.provider!, {
      rawBody: rawBodyBytes,
      headers: headersOf(ctx),
      now: deps.clock.now(),
    });
    ctx.body = { received: results.length };
  });
}
