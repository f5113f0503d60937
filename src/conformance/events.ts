// The events the check triggers itself: an endpoint at its receiver subscribed to every kind, a new
// contact, calls to the simulator's numbers for each ending (busy, no answer, failed twice, completed,
// canceled), and a one-contact campaign run to its end; with the key of an org the operator left just
// above its low-balance threshold, a call of that org whose hold crosses it (balance.low, delivered to
// an endpoint of that org at LOW_BALANCE_PATH under the receiver). Each must arrive; every delivery the
// receiver got is then judged.
import { deliveryProblems, eventKindOf, replayCurl } from './deliveries.js';
import type { Fixtures } from './fixtures.js';
import { unique } from './hints.js';
import type { SchemaJudge } from './judge.js';
import { agentOf, REFUSAL_KEY_VARIABLES } from './refusals.js';
import type { LoopbackReceiver } from './receiver.js';
import type { Session } from './session.js';
import type { SpecDocument } from './spec/document.js';
import type { Operation } from './spec/operations.js';

/** How long the events of the placed calls may take to arrive. */
const ARRIVAL_MS = 90_000;

/**
 * Simulator numbers and the events they end in (the spec's "Simulator test numbers": the last four
 * digits pick the outcome). The completed call's number is one of the simulator's shortest calls.
 */
const NUMBERS: Array<{ number: string; events: string[] }> = [
  { number: '+919876000001', events: ['call.busy'] },
  { number: '+919876000002', events: ['call.no_answer'] },
  { number: '+919876000003', events: ['call.failed'] },
  { number: '+919876000004', events: ['call.failed'] },
  { number: '+919876000000', events: ['call.completed'] },
];

/** The row an event kind's deliveries are counted under in the report. */
export function eventOperation(kind: string): Operation {
  return {
    id: `(event ${kind})`,
    method: 'POST',
    path: kind,
    description: '',
    parameters: [],
    responses: {},
    secured: false,
    isList: false,
  };
}

/** Where under the receiver's URL the low-balance org's endpoint is: its events are not the main org's. */
const LOW_BALANCE_PATH = '/low-balance';

/**
 * One event the run waits for: what it is about, which kinds may carry it, the text its body holds, the
 * receiver path it comes to, and a curl command listing its endpoint's deliveries.
 */
interface Awaited {
  about: string;
  id: string;
  kinds: string[];
  path: string;
  deliveries: string;
}

/** Whether a delivery of one of `kinds` mentioning `id` has arrived at the awaited path. */
const arrived = (receiver: LoopbackReceiver, awaited: Awaited) =>
  receiver.received.some(
    (request) =>
      request.path === awaited.path &&
      awaited.kinds.includes(eventKindOf(request)) &&
      request.rawBody.includes(awaited.id),
  );

/** The curl command that lists an endpoint's deliveries with the key shown as `variable`. */
const deliveriesCurl = (session: Session, webhookId: string, variable: string) =>
  `curl -sS -H 'Authorization: Bearer '"$${variable}" '${session.baseUrl}/webhooks/${webhookId}/deliveries'`;

/**
 * Triggers contact.created, every call.* event, campaign.finished and, with `lowBalanceKey`, balance.low;
 * the function it returns waits for each to reach the receiver (calls take a while: call it after the
 * other scenarios).
 */
export async function triggerEvents(
  session: Session,
  fixtures: Fixtures,
  document: SpecDocument,
  lowBalanceKey: string | undefined,
): Promise<() => Promise<void>> {
  const nothing = () => Promise.resolve();
  const create = session.operation('createWebhook');
  const placeCall = session.operation('createCall');
  const cancel = session.operation('cancelCall');
  const target = fixtures.webhooks;
  const agentId = await fixtures.agent();
  if (!create || !placeCall || !('receiver' in target) || !target.receiver) return nothing;
  const receiver = target.receiver;
  const kinds = (document.components?.schemas?.SubscribableEventKind?.enum as string[] | undefined) ?? [];
  const made = await session.call(
    create,
    { path: {}, query: {}, headers: {}, body: { url: target.url, events: kinds } },
    { kind: 'success' },
    'scenario',
    'events: an endpoint subscribed to every kind',
  );
  const webhookId = (made.json as { data?: { id?: unknown } } | undefined)?.data?.id;
  // Not handed to the fixtures, whose clean-up runs mid-run: the session deletes it at the end.
  if (typeof webhookId !== 'string') return nothing;
  const main = {
    path: new URL(target.url).pathname,
    deliveries: deliveriesCurl(session, webhookId, 'VOICE_CALL_API_KEY'),
  };
  const awaited: Awaited[] = [];
  const contactId = await fixtures.contactId(true);
  if (contactId) awaited.push({ about: `contact ${contactId}`, id: contactId, kinds: ['contact.created'], ...main });
  if (agentId) {
    const place = async (number: string) => {
      const exchange = await session.call(
        placeCall,
        {
          path: {},
          query: {},
          headers: { 'Idempotency-Key': `events-${unique()}` },
          body: { agent_id: agentId, to_e164: number },
        },
        { kind: 'success' },
        'scenario',
        `events: a call to ${number}`,
      );
      const id = (exchange.json as { data?: { id?: unknown } } | undefined)?.data?.id;
      return typeof id === 'string' ? id : undefined;
    };
    for (const { number, events } of NUMBERS) {
      const id = await place(number);
      if (id) awaited.push({ about: `the call ${id} to ${number}`, id, kinds: events, ...main });
    }
    const canceled = await place('+919876000007');
    if (canceled && cancel) {
      await session.call(
        cancel,
        { path: { id: canceled }, query: {}, headers: {} },
        { kind: 'success' },
        'scenario',
        'events: cancel a new call',
      );
      // Canceled while connected, a call ends completed (the spec's call.completed).
      awaited.push({
        about: `the canceled call ${canceled}`,
        id: canceled,
        kinds: ['call.canceled', 'call.completed'],
        ...main,
      });
    }
    const campaign = await runCampaign(session, agentId, contactId);
    if (campaign)
      awaited.push({ about: `the campaign ${campaign}`, id: campaign, kinds: ['campaign.finished'], ...main });
  } else session.note(placeCall.id, `call events not checked: ${fixtures.noAgent}`);
  const lowBalance = lowBalanceKey
    ? await triggerBalanceLow(session, { create, placeCall }, `${target.url}${LOW_BALANCE_PATH}`, lowBalanceKey)
    : undefined;
  if (lowBalance) awaited.push(lowBalance);
  if (!lowBalanceKey) {
    session.note(
      create.id,
      `balance.low not awaited: pass ${REFUSAL_KEY_VARIABLES.lowBalanceKey}, a key of an org whose balance is above its low-balance threshold by less than one call's hold`,
    );
  }
  return () => awaitArrivals(session, receiver, awaited);
}

/**
 * With the key of an org whose balance one call's hold takes below its threshold: subscribes an endpoint
 * of that org at `url` to balance.low and places one call. Returns the balance.low to await, if both
 * were made (the endpoint goes with the session's clean-up, with that key).
 */
async function triggerBalanceLow(
  session: Session,
  operations: { create: Operation; placeCall: Operation },
  url: string,
  key: string,
): Promise<Awaited | undefined> {
  const authorization = `Bearer ${key}`;
  const made = await session.call(
    operations.create,
    { path: {}, query: {}, headers: {}, body: { url, events: ['balance.low'] }, authorization },
    { kind: 'success' },
    'scenario',
    'events: an endpoint of the low-balance org',
  );
  const webhookId = (made.json as { data?: { id?: unknown } } | undefined)?.data?.id;
  const agentId = await agentOf(session, key);
  if (typeof webhookId !== 'string' || !agentId) return undefined;
  await session.call(
    operations.placeCall,
    { path: {}, query: {}, headers: {}, body: { agent_id: agentId, to_e164: '+919876000001' }, authorization },
    { kind: 'success' },
    'scenario',
    "events: a call whose hold takes the low-balance org's balance below its threshold",
  );
  return {
    about: "the low-balance org's call",
    id: '"balance.low"',
    kinds: ['balance.low'],
    path: new URL(url).pathname,
    deliveries: deliveriesCurl(session, webhookId, REFUSAL_KEY_VARIABLES.lowBalanceKey),
  };
}

/** Creates a campaign of the one contact, dialable at once, so that it runs to its end; returns its id. */
async function runCampaign(session: Session, agentId: string, contactId: string | undefined) {
  const create = session.operation('createCampaign');
  if (!create || !contactId) return undefined;
  const exchange = await session.call(
    create,
    {
      path: {},
      query: {},
      headers: {},
      body: {
        name: 'conformance: one contact to its end',
        agent_id: agentId,
        contacts: { contact_ids: [contactId] },
        schedule: { timezone: 'UTC', windows: [{ days: WEEK, start: '00:00', end: '24:00' }] },
      },
    },
    { kind: 'success' },
    'scenario',
    'events: a campaign of one contact',
  );
  const id = (exchange.json as { data?: { id?: unknown } } | undefined)?.data?.id;
  return typeof id === 'string' ? id : undefined;
}

/** Every day of the week, as a campaign window names them. */
const WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** Waits for every awaited event; one that does not arrive in time is a violation. */
async function awaitArrivals(session: Session, receiver: LoopbackReceiver, awaited: Awaited[]): Promise<void> {
  const deadline = Date.now() + ARRIVAL_MS;
  while (Date.now() < deadline && !awaited.every((event) => arrived(receiver, event)))
    await new Promise((done) => setTimeout(done, 250));
  for (const event of awaited.filter((candidate) => !arrived(receiver, candidate))) {
    session.flag(
      eventOperation(event.kinds[0]!),
      'scenario',
      'events: delivery expected',
      undefined,
      [`no ${event.kinds.join(' or ')} delivery for ${event.about} reached the receiver within ${ARRIVAL_MS / 1000} s`],
      event.deliveries,
    );
  }
}

/** Judges every delivery the receiver got during the run, each violation under its event kind. */
export function judgeDeliveries(
  session: Session,
  document: SpecDocument,
  judge: SchemaJudge,
  receiver: LoopbackReceiver,
): void {
  for (const received of receiver.received) {
    const kind = eventKindOf(received);
    session.count(eventOperation(kind));
    const problems = deliveryProblems(document, judge, received, [...session.secrets]);
    session.flag(
      eventOperation(kind),
      'scenario',
      `delivery ${String(received.headers['x-svc-delivery'] ?? '')}`,
      undefined,
      problems,
      replayCurl(received, receiver.url),
    );
  }
}
