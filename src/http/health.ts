// Liveness and readiness probes, outside the API contract and without authentication.
import type Router from '@koa/router';
import { readinessAnswer, type Readiness } from '../health/readiness.js';

/**
 * Registers GET /healthz (the process answers) and GET /readyz: 200 when the process should get
 * traffic, 503 while it drains for a shutdown or its database does not answer (within about 1.5 s).
 */
export function healthRoutes(router: Router, readiness: Readiness): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const { status, headers, body } = readinessAnswer(await readiness.notReadyReason());
    ctx.status = status;
    ctx.set(headers);
    ctx.body = body;
  });
}
