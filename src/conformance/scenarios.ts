// Behaviour the spec documents in prose, checked as short request sequences: routing errors,
// idempotent replays and conflicts, state conflicts, repeated deletes, refused URLs, the webhook limit,
// paging, and the event log against the deliveries.
import { NO_ENDPOINT, type Fixtures } from './fixtures.js';
import { unique } from './hints.js';
import type { Exchange } from './http.js';
import { paging } from './pagination.js';
import { triggerEvents } from './events.js';
import { checkEventLog } from './event-log.js';
import { exhaustMainOrg, refusals, type RefusalKeys } from './refusals.js';
import type { Session } from './session.js';
import type { ReceivedRequest } from '../tools/https-receiver.js';
import type { SpecDocument } from './spec/document.js';
import type { Operation } from './spec/operations.js';
import { pathParameterNames } from './spec/paths.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const notFound = (param?: string) =>
  ({ kind: 'error', status: 404, code: 'not_found', ...(param ? { param } : {}) }) as const;
const dataOf = (exchange: Exchange) => (exchange.json as { data?: Record<string, unknown> } | undefined)?.data;

/** Unknown routes answer 404 not_found; known paths with an undeclared method answer 405 with Allow. */
async function routing(session: Session, document: SpecDocument): Promise<void> {
  const errorSchema = '/components/schemas/ErrorResponse';
  const route = (id: string, method: string, path: string): Operation => ({
    id,
    method,
    path,
    description: '',
    parameters: [],
    responses: { '404': errorSchema, '405': errorSchema },
    secured: true,
    isList: false,
  });
  await session.call(
    route('(unknown route)', 'GET', '/zz-no-such-route'),
    { path: {}, query: {}, headers: {} },
    notFound(),
    'scenario',
    'unknown route',
  );
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, object>)) {
    const declared = METHODS.filter((method) => method.toLowerCase() in item);
    const method = METHODS.find((candidate) => !declared.includes(candidate));
    if (!method) continue;
    const values = Object.fromEntries(pathParameterNames(path).map((name) => [name, crypto.randomUUID()]));
    await session.call(
      route('(method not allowed)', method, path),
      { path: values, query: {}, headers: {} },
      { kind: 'error', status: 405, code: 'method_not_allowed' },
      'scenario',
      `${method} ${path}`,
      (exchange) => {
        const allow = (exchange.headers.get('allow') ?? '').split(/,\s*/).sort().join(', ');
        return allow === [...declared].sort().join(', ')
          ? []
          : [`expected Allow to list ${declared.join(', ')}, got ${exchange.headers.get('allow')}`];
      },
    );
  }
}

/** Idempotency-Key: same body replays (same id, Idempotent-Replayed: true), other body conflicts; 0005 numbers fail upstream on the simulator. */
async function createCall(session: Session, fixtures: Fixtures): Promise<void> {
  const operation = session.operation('createCall');
  const agentId = await fixtures.agent();
  if (!operation || !agentId) return;
  const key = `conformance-${unique()}`;
  const input = {
    path: {},
    query: {},
    headers: { 'Idempotency-Key': key },
    body: { agent_id: agentId, to_e164: '+919812345670' },
  };
  const first = await session.call(operation, input, { kind: 'success' }, 'scenario', 'Idempotency-Key: first request');
  await session.call(operation, input, { kind: 'success' }, 'scenario', 'Idempotency-Key: replay', (replay) => [
    ...(replay.headers.get('idempotent-replayed') === 'true' ? [] : ['a replay must carry Idempotent-Replayed: true']),
    ...(dataOf(replay)?.id === dataOf(first)?.id ? [] : ['a replay must return the first call']),
  ]);
  await session.call(
    operation,
    { ...input, body: { ...input.body, to_e164: '+919812345671' } },
    { kind: 'error', status: 409, code: 'idempotency_conflict', param: 'Idempotency-Key' },
    'scenario',
    'Idempotency-Key reused with another body',
  );
  if (dataOf(first)?.provider === 'simulator') {
    await session.call(
      operation,
      { path: {}, query: {}, headers: {}, body: { agent_id: agentId, to_e164: '+919812340005' } },
      { kind: 'error', status: 502, code: 'upstream_error' },
      'scenario',
      'simulator number ending 0005 is refused upstream',
    );
  }
}

/** A call that has ended cannot be canceled again: 409 invalid_state. */
async function cancelCall(session: Session, fixtures: Fixtures): Promise<void> {
  const operation = session.operation('cancelCall');
  const id = operation && (await fixtures.call(true));
  if (!operation || !id) return;
  const input = { path: { id }, query: {}, headers: {} };
  await session.call(operation, input, { kind: 'declared' }, 'scenario', 'cancel a new call');
  await session.call(
    operation,
    input,
    { kind: 'error', status: 409, code: 'invalid_state' },
    'scenario',
    'cancel an ended call',
  );
}

/** Deleting twice: the second answers 404 not_found. */
async function deleteWebhook(session: Session, fixtures: Fixtures): Promise<void> {
  const operation = session.operation('deleteWebhook');
  const id = operation && (await fixtures.webhook(true));
  if (!operation || !id) return;
  const input = { path: { id }, query: {}, headers: {} };
  await session.call(operation, input, { kind: 'success' }, 'scenario', 'delete an endpoint');
  await session.call(operation, input, notFound('id'), 'scenario', 'delete it again');
}

const webhookBody = (url: string) => ({ path: {}, query: {}, headers: {}, body: { url, events: ['contact.created'] } });

/** Localhost URLs are refused; the 21st endpoint of an org is refused with forbidden (when the server accepts an endpoint at all). */
async function createWebhook(session: Session, fixtures: Fixtures): Promise<void> {
  const operation = session.operation('createWebhook');
  if (!operation) return;
  const body = webhookBody;
  await session.call(
    operation,
    body('https://localhost/hook'),
    { kind: 'error', status: 400, code: 'invalid_request', param: 'url' },
    'scenario',
    'localhost URL',
  );
  const url = fixtures.webhooks.url;
  if (!url) {
    session.note(operation.id, `the limit of 20 endpoints not checked: ${NO_ENDPOINT}`);
    return;
  }
  const created: string[] = [];
  let refused = false;
  for (let attempt = 0; attempt < 21 && !refused; attempt += 1) {
    const exchange = await session.call(
      operation,
      body(url),
      { kind: 'declared' },
      'scenario',
      'fill the webhook limit',
    );
    if (exchange.status >= 200 && exchange.status < 300) created.push(String(dataOf(exchange)?.id));
    refused = exchange.status === 403;
  }
  const last = await session.call(
    operation,
    body(url),
    { kind: 'error', status: 403, code: 'forbidden' },
    'scenario',
    'one endpoint over the limit of 20',
  );
  if (last.status >= 200 && last.status < 300) created.push(String(dataOf(last)?.id));
  for (const id of created) fixtures.adopt(id);
  await fixtures.cleanup();
}

/** Redelivery needs an active endpoint: 409 invalid_state otherwise. */
async function redeliver(session: Session, fixtures: Fixtures): Promise<void> {
  const operation = session.operation('redeliverWebhookDelivery');
  const update = session.operation('updateWebhook');
  if (!operation || !update) return;
  const webhookId = await fixtures.webhook(true);
  const deliveryId = await fixtures.delivery(webhookId);
  if (!webhookId || !deliveryId) return;
  await session.call(
    update,
    { path: { id: webhookId }, query: {}, headers: {}, body: { active: false } },
    { kind: 'success' },
    'scenario',
    'switch the endpoint off',
  );
  await session.call(
    operation,
    { path: { id: webhookId, delivery_id: deliveryId }, query: {}, headers: {} },
    { kind: 'error', status: 409, code: 'invalid_state' },
    'scenario',
    'redeliver to an inactive endpoint',
  );
}

/** The event id of a received body, when it is a JSON envelope. */
function eventIdOf(received: ReceivedRequest): unknown {
  try {
    return (JSON.parse(received.rawBody) as { id?: unknown }).id;
  } catch {
    return undefined;
  }
}

/** A test event reaches the check's own receiver (a failed attempt is a violation; its headers, body and signature are judged with every delivery). */
async function signedDelivery(session: Session, fixtures: Fixtures): Promise<void> {
  const create = session.operation('createWebhook');
  const send = session.operation('testWebhook');
  const target = fixtures.webhooks;
  if (!create || !send || !('receiver' in target) || !target.receiver) return;
  const receiver = target.receiver;
  const made = await session.call(
    create,
    webhookBody(target.url),
    { kind: 'success' },
    'scenario',
    "an endpoint at the check's receiver",
  );
  const id = dataOf(made)?.id;
  const secret = (made.json as { secret?: unknown } | undefined)?.secret;
  if (typeof id !== 'string' || typeof secret !== 'string') return;
  fixtures.adopt(id);
  await session.call(
    send,
    { path: { id }, query: {}, headers: {} },
    { kind: 'success' },
    'scenario',
    'a test event arrives signed',
    (exchange) => {
      const delivery = dataOf(exchange) as
        | { event_id?: string; attempts?: Array<{ status_code: number | null; failure_kind: string | null }> }
        | undefined;
      const attempt = delivery?.attempts?.[0];
      if (attempt?.status_code !== 200) {
        const kind = attempt?.failure_kind ?? `status ${attempt?.status_code ?? 'none'}`;
        const advice =
          kind === 'tls'
            ? `; start the server with NODE_EXTRA_CA_CERTS=${receiver.caFile} so it trusts the receiver`
            : '';
        return [`the test delivery to ${target.url} failed (${kind})${advice}`];
      }
      const received = receiver.received.find((request) => eventIdOf(request) === delivery?.event_id);
      return received ? [] : ['the test delivery was answered 200, but the receiver got no request with its event id'];
    },
  );
}

/** Runs every scenario whose operations the spec has. */
export async function runScenarios(
  session: Session,
  fixtures: Fixtures,
  document: SpecDocument,
  keys: RefusalKeys,
): Promise<void> {
  const awaitEvents = await triggerEvents(session, fixtures, document, keys.lowBalanceKey);
  for (const scenario of [
    () => routing(session, document),
    () => createCall(session, fixtures),
    () => cancelCall(session, fixtures),
    () => deleteWebhook(session, fixtures),
    () => redeliver(session, fixtures),
    () => signedDelivery(session, fixtures),
    () => createWebhook(session, fixtures),
    () => paging(session, fixtures),
    () => refusals(session, keys),
  ]) {
    await scenario();
  }
  await awaitEvents();
  const target = fixtures.webhooks;
  if ('receiver' in target && target.receiver) await checkEventLog(session, target.receiver);
  // Last: the main org may be left without requests for up to a minute.
  await exhaustMainOrg(session, keys);
}
