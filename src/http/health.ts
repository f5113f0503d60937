// Liveness and readiness probes, outside the API contract and without authentication.
import type Router from '@koa/router';
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';

/** Registers GET /healthz (the process answers) and GET /readyz (the database answers within 2 s). */
export function healthRoutes(router: Router, db: Db): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    try {
      await Promise.race([
        sql`SELECT 1`.execute(db),
        new Promise((_, reject) => setTimeout(() => reject(new Error('database timeout')), 2_000).unref()),
      ]);
      ctx.body = { status: 'ready', database: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', database: 'unreachable' };
    }
  });
}
