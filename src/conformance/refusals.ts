// The refusals a well-formed request can get: 429 from an org that used up its rate limit, 402 from
// an org without credits, 403 from an org without a plan (each with keys of such orgs, which the
// operator CLI makes), 415 for an unknown Content-Encoding and 408 for a body that never arrives.
import http from 'node:http';
import https from 'node:https';
import { waitingOutRateLimits, type Exchange, type HttpRequest } from './http.js';
import type { Session } from './session.js';
import type { Operation } from './spec/operations.js';

/**
 * Keys of orgs the operator makes for answers the main org cannot give (refusals, and a balance falling
 * below its threshold), each optional, and whether the main org's rate limit may be used up.
 */
export interface RefusalKeys {
  /** An org on a small plan, whose limit the check exhausts. */
  smallPlanKey?: string;
  /** An org with an agent and a plan but no credits. */
  noCreditsKey?: string;
  /** An org with an agent and credits but no plan. */
  noPlanKey?: string;
  /** An org with an agent whose test balance is above its low-balance threshold by less than one call's hold. */
  lowBalanceKey?: string;
  /** Exhaust the main org's limit when no small-plan key is given (a shared deployment: opt-in). */
  exerciseRateLimit?: boolean;
}

/** The environment variables the CLI reads the keys from (and curl lines show them as). */
export const REFUSAL_KEY_VARIABLES = {
  smallPlanKey: 'VOICE_CALL_SMALL_PLAN_API_KEY',
  noCreditsKey: 'VOICE_CALL_NO_CREDITS_API_KEY',
  noPlanKey: 'VOICE_CALL_NO_PLAN_API_KEY',
  lowBalanceKey: 'VOICE_CALL_LOW_BALANCE_API_KEY',
} as const;

const empty = { path: {}, query: {}, headers: {} };
const dataOf = (exchange: Exchange) => (exchange.json as { data?: Array<{ id?: string }> } | undefined)?.data;

/** The first agent of the org behind `key`, listed with that key. */
export async function agentOf(session: Session, key: string): Promise<string | undefined> {
  const list = session.operation('listAgents');
  if (!list) return undefined;
  const exchange = await session.call(
    list,
    { ...empty, query: { limit: 1 }, authorization: `Bearer ${key}` },
    { kind: 'success' },
    'scenario',
    'refusals: the agent of a refused org',
  );
  return dataOf(exchange)?.[0]?.id;
}

/** POST /calls from the org behind `key` must be refused with `status` and `code`. */
async function refusedCall(session: Session, key: string, status: number, code: string, label: string) {
  const create = session.operation('createCall');
  const agentId = create && (await agentOf(session, key));
  if (!create) return;
  if (!agentId) {
    session.note(create.id, `${label} not checked: the org of its key has no agent`);
    return;
  }
  await session.call(
    create,
    { ...empty, body: { agent_id: agentId, to_e164: '+919876000006' }, authorization: `Bearer ${key}` },
    { kind: 'error', status, code },
    'scenario',
    label,
  );
}

/**
 * Sends cheap requests with `key` until one is refused with 429 (judged like every answer, so its
 * headers too, Retry-After included); none within the limit the answers announce, and a few more,
 * is a violation.
 */
async function exhaust(session: Session, key: string | undefined, label: string): Promise<void> {
  const list = session.operation('listAgents');
  if (!list) return;
  const input = { ...empty, query: { limit: 1 }, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  let limit = Infinity;
  let last: Exchange | undefined;
  for (let sent = 0; sent < limit + 5; sent += 1) {
    last = await session.call(list, input, { kind: 'declared' }, 'scenario', label, () => [], false);
    if (last.status === 429) break;
    limit = Number(last.headers.get('x-ratelimit-limit') ?? 10_000);
  }
  const code = (last?.json as { error?: { code?: unknown } } | undefined)?.error?.code;
  session.flag(
    list,
    'scenario',
    label,
    last,
    last?.status !== 429
      ? [`no 429 after ${limit + 5} requests with X-RateLimit-Limit ${limit}`]
      : code === 'too_many_requests'
        ? []
        : [`expected error.code too_many_requests on the 429, got ${JSON.stringify(code)}`],
  );
}

/** 415 for a body in a Content-Encoding the service does not decode, on each operation (without path values) that declares it. */
async function unknownEncoding(session: Session): Promise<void> {
  const declaring = session.operations.filter(
    (candidate) => '415' in candidate.responses && !candidate.path.includes('{'),
  );
  for (const operation of declaring) {
    await session.call(
      operation,
      { ...empty, headers: { 'Content-Encoding': 'x-unknown' }, body: {} },
      { kind: 'error', status: 415, code: 'unsupported_media_type', param: 'Content-Encoding' },
      'scenario',
      'refusals: an unknown Content-Encoding',
    );
  }
}

/** Sends the headers of `request` and one byte of a longer body, then nothing; resolves with the answer. */
function stalledBody(request: HttpRequest): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const client = url.protocol === 'https:' ? https : http;
    const sent = client.request(
      url,
      { method: request.method, headers: { ...request.headers, 'Content-Length': '64' }, timeout: 60_000 },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers))
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          sent.destroy();
          resolve({ request, status: answer.statusCode ?? 0, headers, text, json });
        });
      },
    );
    sent.on('timeout', () => sent.destroy(new Error('no answer within 60 s to a stalled body')));
    sent.on('error', reject);
    sent.write('{');
  });
}

/** A shell command that sends the request's head and one byte of its body, then waits (curl cannot stall a body). */
function stallCommand(request: HttpRequest): string {
  const url = new URL(request.url);
  const lines = [`${request.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [name, value] of Object.entries(request.headers))
    lines.push(name === 'Authorization' ? `${name}: Bearer %s` : `${name}: ${value}`);
  lines.push('Content-Length: 64', '', '{');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const connect =
    url.protocol === 'https:'
      ? `openssl s_client -quiet -connect ${url.hostname}:${port}`
      : `nc ${url.hostname} ${port}`;
  return `(printf '${lines.join('\\r\\n')}' "$VOICE_CALL_API_KEY"; sleep 30) | ${connect}`;
}

/** 408 for a body that stops arriving, on the first operation that declares it. */
async function slowBody(session: Session, operation: Operation | undefined): Promise<void> {
  if (!operation) return;
  const label = 'refusals: a body that stops after one byte';
  const request = session.request(operation, { ...empty, body: { phone_e164: '+919876000006' } });
  // A 429 is waited out here too: the org's limit may be used up by the requests before this one.
  const exchange = await waitingOutRateLimits(() => stalledBody(request)).catch((error: Error) => error);
  session.count(operation, exchange instanceof Error ? undefined : exchange.status);
  if (exchange instanceof Error) {
    session.flag(
      operation,
      'scenario',
      label,
      { request, status: 0, headers: new Headers(), text: '', json: undefined },
      [exchange.message],
    );
    return;
  }
  session.flag(
    operation,
    'scenario',
    label,
    exchange,
    session.judged(operation, exchange, { kind: 'error', status: 408, code: 'request_timeout', param: 'body' }),
    stallCommand(request),
  );
}

/** Runs the refusals the given keys and flags allow; says in a note which ones it could not run. */
export async function refusals(session: Session, keys: RefusalKeys): Promise<void> {
  const create = session.operation('createCall');
  await unknownEncoding(session);
  await slowBody(
    session,
    session.operations.find(
      (operation) => '408' in operation.responses && operation.body && !operation.path.includes('{'),
    ),
  );
  const operator = 'make one with `admin org create` and pass its key in';
  if (keys.noCreditsKey)
    await refusedCall(session, keys.noCreditsKey, 402, 'insufficient_credits', 'refusals: an org without credits');
  else if (create)
    session.note(
      create.id,
      `402 not checked: no org without credits (${operator} ${REFUSAL_KEY_VARIABLES.noCreditsKey})`,
    );
  if (keys.noPlanKey) await refusedCall(session, keys.noPlanKey, 403, 'forbidden', 'refusals: an org without a plan');
  else if (create)
    session.note(
      create.id,
      `403 for an org without a plan not checked (${operator} ${REFUSAL_KEY_VARIABLES.noPlanKey})`,
    );
  if (keys.smallPlanKey) await exhaust(session, keys.smallPlanKey, "refusals: exhaust a small plan's rate limit");
}

/** Exhausts the main org's limit, last in a run, when asked to and no small-plan org was given. */
export async function exhaustMainOrg(session: Session, keys: RefusalKeys): Promise<void> {
  const list = session.operation('listAgents');
  if (keys.smallPlanKey || !list) return;
  if (keys.exerciseRateLimit) await exhaust(session, undefined, "refusals: exhaust the org's rate limit");
  else
    session.note(
      list.id,
      `429 not checked: pass ${REFUSAL_KEY_VARIABLES.smallPlanKey} (an org on a small plan) or --exercise-rate-limit (uses up this org's limit for a minute)`,
    );
}
