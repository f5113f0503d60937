// What the spec says in prose about valid requests, applied to generated ones so they stay valid:
// referenced agents must exist, webhook URLs must be deliverable, Idempotency-Keys are single-use
// per body, `consent_capture` is required for a new contact, and the simulator refuses numbers ending 0005.
import type { Fixtures } from './fixtures.js';
import type { Expectation } from './judge.js';
import type { RequestInput } from './request.js';

/** A generated request made valid for this deployment, and what it should get. */
export interface Pinned {
  input: RequestInput;
  expectation: Expectation;
}

let counter = 0;
const runTag = Math.random().toString(36).slice(2, 8);

/** A token unique within this process, safe inside any header or field. */
export function unique(): string {
  counter += 1;
  return `${runTag}${counter}`;
}

/** Applies the prose rules to a generated valid request. */
export async function pinValid(input: RequestInput, fixtures: Fixtures): Promise<Pinned> {
  const pinned: RequestInput = { ...input, headers: { ...input.headers } };
  let expectation: Expectation = { kind: 'success' };
  if ('Idempotency-Key' in pinned.headers) {
    pinned.headers['Idempotency-Key'] = `${pinned.headers['Idempotency-Key']!.slice(0, 200)}.${unique()}`;
  }
  if (pinned.body && typeof pinned.body === 'object' && !Array.isArray(pinned.body)) {
    const body = { ...(pinned.body as Record<string, unknown>) };
    if ('agent_id' in body) {
      // The API cannot create agents: without --agent-id the generated id names no agent of the org.
      if (fixtures.options.agentId) body.agent_id = fixtures.options.agentId;
      else expectation = { kind: 'error', status: 404, code: 'not_found', param: 'agent_id' };
    }
    if (typeof body.url === 'string') body.url = fixtures.options.webhookUrl;
    if (typeof body.to_e164 === 'string' && body.to_e164.endsWith('0005'))
      body.to_e164 = `${body.to_e164.slice(0, -1)}6`;
    if (typeof body.phone_e164 === 'string' && !('consent_capture' in body)) {
      const known = await fixtures.contactPhone();
      if (known) body.phone_e164 = known;
      else body.consent_capture = 'manual';
    }
    pinned.body = body;
  }
  return { input: pinned, expectation };
}
