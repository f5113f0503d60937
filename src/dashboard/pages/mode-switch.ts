// The test-mode switch's form: any member may turn it on or off (it changes what they see, not the
// org), after which the browser goes back to the section it was on.
import type Router from '@koa/router';
import type Koa from 'koa';
import { DomainError } from '../../errors.js';
import { MODES } from '../../orgs/modes.js';
import { action, field, formBody, redirectAfterPost, returnPath, type DashboardEnv } from '../route-steps.js';
import { setModeCookie, type DashboardSession } from '../mode.js';

/** POST: shows the mode asked for (live or test) from the next page on. */
function switchMode(ctx: Koa.Context, _session: DashboardSession, env: DashboardEnv): Promise<void> {
  const mode = MODES.find((entry) => entry === field(ctx, 'mode'));
  if (!mode) {
    return Promise.reject(
      new DomainError('invalid_request', 'Choose live or test mode; nothing was changed.', { param: 'mode' }),
    );
  }
  setModeCookie(ctx, mode, env.secureCookies);
  redirectAfterPost(ctx, returnPath(field(ctx, 'next')));
  return Promise.resolve();
}

/** Registers the switch's form target. */
export function modeSwitchRoutes(router: Router, env: DashboardEnv): void {
  router.post('/dashboard/mode', formBody, action(env, switchMode, { anyRole: true }));
}
