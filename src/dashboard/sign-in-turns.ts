// A fair share of the event loop for sign-in posts. Each one waits for the loop's next turn (after the
// I/O that turn found ready: other tenants' requests and their database answers) and only a few go on
// per turn, so a flood of sign-ins, however cheap each refusal is, adds at most a few of them to any
// other request's wait. Nothing is refused or delayed beyond that: on an idle loop a turn is immediate.
import type Koa from 'koa';
import { SIGN_IN_POSTS_PER_TURN } from '../members/policy.js';

const waiting: Array<() => void> = [];
let scheduled = false;

/** Lets the next few waiting sign-ins go on, and comes back on the following turn for the rest. */
function releaseTurn(): void {
  scheduled = false;
  for (let released = 0; released < SIGN_IN_POSTS_PER_TURN && waiting.length > 0; released += 1) waiting.shift()!();
  if (waiting.length > 0) scheduleTurn();
}

function scheduleTurn(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(releaseTurn);
}

/** Middleware: the request goes on once its turn comes (see above). */
export const signInTurn: Koa.Middleware = async (_ctx, next) => {
  await new Promise<void>((resolve) => {
    waiting.push(resolve);
    scheduleTurn();
  });
  await next();
};
