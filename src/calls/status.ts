// The call status chain: which statuses end a call and which moves are allowed.
import type { components } from '../../generated/openapi.js';

export type CallStatus = components['schemas']['CallStatus'];
/** The statuses that end a call; a call never leaves them. */
export type TerminalStatus = Extract<CallStatus, 'completed' | 'failed' | 'no_answer' | 'busy' | 'canceled'>;

const NEXT: Record<CallStatus, readonly CallStatus[]> = {
  queued: ['dialing', 'failed', 'canceled'],
  dialing: ['ringing', 'busy', 'no_answer', 'failed', 'canceled'],
  ringing: ['in_progress', 'busy', 'no_answer', 'failed', 'canceled'],
  in_progress: ['completed', 'failed'],
  completed: [],
  failed: [],
  no_answer: [],
  busy: [],
  canceled: [],
};

/** Every status, in the order of the chain. */
export const CALL_STATUSES = Object.keys(NEXT) as CallStatus[];

/** Whether `status` ends a call. */
export function isTerminal(status: CallStatus): status is TerminalStatus {
  return NEXT[status].length === 0;
}

/** Whether the chain allows moving from `from` to `to`. */
export function canTransition(from: CallStatus, to: CallStatus): boolean {
  return NEXT[from].includes(to);
}
