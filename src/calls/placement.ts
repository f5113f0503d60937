// Placing a call in two steps, so no pool connection or ledger lock is held while the provider answers:
// the first step runs the pre-call checks, reserves the hold and stores a pending placement (not visible
// through the API), in one transaction or, for the common placement, in two statements without one; the
// provider is then asked outside any transaction, with its own deadline; the second step
// (./placement-record.ts, grouped by ./placement-recorder.ts) turns the placement into a queued call with
// the provider's id, or on a refusal removes it and gives the hold back. When the provider's answer
// never comes, the placement is kept (hold reserved, Idempotency-Key pending) for the reconciliation
// worker, and never dialed again.
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { DomainError, notFound } from '../errors.js';
import type { AuthContext } from '../orgs/authenticator.js';
import { DEFAULT_FROM_E164, findAgentInOrg, findOrg, hasActivePlan } from '../orgs/service.js';
import { holdFor, reserveHold, reserveHolds } from '../orgs/credits.js';
import { findSuppressed, listedNumberError } from '../suppressions/service.js';
import { lockCallSlots, refuseOverCallCap } from './concurrency.js';
import { ProviderRefusedError, type Placed, type ProviderSettings, type VoiceProvider } from './provider/types.js';
import { providerDescriptor } from './provider/catalog.js';
import { simulatorProvider } from './provider/simulator/index.js';
import {
  findPlacementFacts,
  isKeyPlacementUnknown,
  insertPlacement,
  insertPlacementWithQuietHold,
  insertPlacements,
  lockPlacement,
  markPlacementUnknown,
  type PlacementFacts,
  type PlacementRow,
} from './placement-queries.js';
import { voidPlacement } from './placement-record.js';
import { recorderFor } from './placement-recorder.js';
import { awaitResponse, claimOrReplay } from './idempotency.js';
import { toCallCreated } from './mapper.js';
import { FIRST_STEP_SPARE_CONNECTIONS, IDEMPOTENCY_POLL_MS, PLACEMENT_RECOVERY_GRACE_MS } from './policy.js';
import { OrgSlots } from './org-slots.js';

type Schemas = components['schemas'];

/** A call placement as the API received it. */
export interface PlaceCallRequest {
  auth: PlacingOrg;
  body: Schemas['CallCreate'];
  idempotencyKey: string | undefined;
  /** For a campaign's call: which campaign, contact and attempt it is (dialed at most once each). */
  campaign?: CampaignAttempt;
}

/** Whose call it is: the data org, its live org (for agents) and the mode. */
export type PlacingOrg = Pick<AuthContext, 'orgId' | 'accountOrgId' | 'livemode'>;

/** A campaign's attempt at one of its contacts. */
export interface CampaignAttempt {
  campaignId: string;
  contactId: string;
  attempt: number;
}

/** What a placement dials through: the provider and the agent's settings for it. */
interface Route {
  provider: VoiceProvider;
  settings: ProviderSettings;
}

/**
 * Where a call of `auth`'s mode with `agent` goes: in test mode always the simulator (with no settings),
 * whatever the agent's provider; in live mode the agent's provider, or DomainError upstream_error when
 * this service cannot use it for the agent.
 */
function routeFor(
  deps: AppDeps,
  auth: PlacingOrg,
  agent: { provider: string; provider_settings: ProviderSettings },
): Route {
  if (!auth.livemode) {
    const simulator = deps.providers.get(simulatorProvider.name);
    if (!simulator) throw new Error('the simulator is not among the configured providers');
    return { provider: simulator, settings: {} };
  }
  return { provider: providerFor(deps, agent), settings: agent.provider_settings };
}

/** routeFor's answer, or its refusal (DomainError upstream_error) returned rather than thrown. */
function routeOrRefusal(
  deps: AppDeps,
  auth: PlacingOrg,
  agent: { provider: string; provider_settings: ProviderSettings },
): Route | DomainError {
  try {
    return routeFor(deps, auth, agent);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

/** The agent's provider, or DomainError upstream_error when this service cannot use it for the agent. */
function providerFor(deps: AppDeps, agent: { provider: string; provider_settings: ProviderSettings }): VoiceProvider {
  const provider = deps.providers.get(agent.provider);
  if (!provider) {
    const needs = providerDescriptor(agent.provider)?.requires ?? [];
    throw new DomainError(
      'upstream_error',
      `The agent's voice provider (${agent.provider}) is not configured on this service${needs.length > 0 ? ` (it needs ${needs.join(' and ')})` : ''}. Nothing was charged.`,
    );
  }
  const missing = (providerDescriptor(agent.provider)?.settings ?? []).filter(
    (setting) => !agent.provider_settings[setting.key],
  );
  if (missing.length > 0) {
    throw new DomainError(
      'upstream_error',
      `The agent lacks its ${agent.provider} settings (${missing.map((setting) => setting.flag).join(', ')}). Nothing was charged.`,
    );
  }
  return provider;
}

/** The placing org's facts, checked in the documented order before anything is written. */
type CheckedFacts = Omit<PlacementFacts, 'org_plan_active' | 'suppression_reason'>;

/**
 * Reads the agent, the plan, the do-not-call list and the org's caller id in one statement, and checks
 * them in the documented order. Throws DomainError not_found (agent_id), or forbidden (no plan; or
 * param to_e164, a number on the do-not-call list). The plan is read now, not from the key cache: a plan
 * removed a moment ago stops placements at once; the list is the mode's own.
 */
async function checkPlacementFacts(db: Db, request: PlaceCallRequest): Promise<CheckedFacts> {
  const { auth, body } = request;
  const facts = await findPlacementFacts(db, {
    accountOrgId: auth.accountOrgId,
    orgId: auth.orgId,
    agentId: body.agent_id,
    toE164: body.to_e164,
  });
  if (!facts) throw notFound('agent', 'agent_id');
  const { org_plan_active, suppression_reason, ...checked } = facts;
  if (!org_plan_active) throw new DomainError('forbidden', 'The organisation has no active plan.');
  if (suppression_reason !== null) throw listedNumberError(body.to_e164, suppression_reason);
  return checked;
}

/** The hold a request's call takes: its max_duration_sec (the agent's unless given) at the agent's rate. */
function holdOf(request: PlaceCallRequest, facts: CheckedFacts): number {
  return holdFor(request.body.max_duration_sec ?? facts.max_duration_sec, facts.rate_paise_per_minute);
}

/** The pending placement a request makes with `facts`, dialed through `route`. */
function newPlacement(
  deps: AppDeps,
  request: PlaceCallRequest,
  facts: CheckedFacts,
  route: Route,
  now: Date,
): PlacementRow {
  const { body } = request;
  return {
    id: randomUUID(),
    org_id: request.auth.orgId,
    agent_id: facts.id,
    state: 'pending',
    provider: route.provider.name,
    provider_settings: route.settings,
    from_e164: body.from_e164 ?? facts.from_e164 ?? facts.org_default_from_e164 ?? DEFAULT_FROM_E164,
    to_e164: body.to_e164,
    language: body.language ?? facts.language,
    max_duration_sec: body.max_duration_sec ?? facts.max_duration_sec,
    rate_paise_per_minute: facts.rate_paise_per_minute,
    hold_paise: holdOf(request, facts),
    metadata: body.metadata ?? {},
    idempotency_key: request.idempotencyKey ?? null,
    campaign_id: request.campaign?.campaignId ?? null,
    campaign_contact_id: request.campaign?.contactId ?? null,
    campaign_attempt: request.campaign?.attempt ?? null,
    created_at: now,
    // Past this, the process asking the provider has given up or died: recovery looks the call up.
    recover_at: new Date(now.getTime() + deps.config.providerTimeoutMs + PLACEMENT_RECOVERY_GRACE_MS),
  };
}

/** A placement reserved by the first step, and the provider it goes to. */
interface Reserved {
  placement: PlacementRow;
  provider: VoiceProvider;
}

/** Each process's caps on an org's first steps, one per app (apps of one test process stay apart). */
const firstSteps = new WeakMap<AppDeps, OrgSlots>();

/** The cap on an org's placement first steps in the process of `deps` (see FIRST_STEP_SPARE_CONNECTIONS). */
function firstStepSlots(deps: AppDeps): OrgSlots {
  let slots = firstSteps.get(deps);
  if (!slots) {
    slots = new OrgSlots(Math.max(1, deps.config.dbPoolSize - FIRST_STEP_SPARE_CONNECTIONS));
    firstSteps.set(deps, slots);
  }
  return slots;
}

/**
 * The first step in two statements and no transaction, for the common placement: no Idempotency-Key, no
 * concurrency cap on the plan, a provider this service can use, and a hold that fits without owing a
 * balance.low notice. The checks' read and the placement stored with its hold (one statement, so the
 * org's row is locked only while it runs; within the org's first-step slots). For any other placement,
 * having written nothing, the facts it read, for reservePlacement's transaction; throws what
 * checkPlacementFacts throws.
 */
async function reserveWithoutTransaction(
  deps: AppDeps,
  request: PlaceCallRequest,
  now: Date,
): Promise<Reserved | { facts: CheckedFacts }> {
  const facts = await checkPlacementFacts(deps.db, request);
  if (facts.org_call_cap !== null) return { facts };
  const route = routeOrRefusal(deps, request.auth, facts);
  if (route instanceof DomainError) return { facts };
  const placement = newPlacement(deps, request, facts, route, now);
  const stored = await firstStepSlots(deps).run(placement.org_id, () =>
    insertPlacementWithQuietHold(deps.db, placement),
  );
  return stored ? { placement, provider: route.provider } : { facts };
}

/**
 * The first transaction: the pre-call checks in the documented order, the hold reserved and the
 * placement stored. Throws DomainError not_found (agent_id), forbidden (no plan; or param to_e164, a
 * number on the do-not-call list), too_many_requests (the plan's concurrency cap is reached),
 * insufficient_credits or upstream_error (provider not configured), having written nothing. `checked`
 * are the facts reserveWithoutTransaction read and checked a moment ago, when it did.
 */
async function reservePlacement(
  trx: Db,
  deps: AppDeps,
  request: PlaceCallRequest,
  now: Date,
  checked: CheckedFacts | undefined,
): Promise<Reserved> {
  const { auth } = request;
  const facts = checked ?? (await checkPlacementFacts(trx, request));
  // Under a cap, takes the org's row lock, held to commit, so concurrent placements count each other's.
  await refuseOverCallCap(trx, auth.orgId, facts.org_call_cap);
  const takeHold = async (holdPaise: number) => {
    if (await reserveHold(trx, { orgId: auth.orgId, paise: holdPaise })) return;
    const available = (await findOrg(trx, auth.orgId))?.balance_paise ?? 0;
    throw new DomainError(
      'insufficient_credits',
      `This call needs a hold of ${holdPaise} paise but only ${available} paise are available.`,
    );
  };
  // The spec puts the provider's check after the credits: a refusal is told only once the hold fits.
  const route = routeOrRefusal(deps, auth, facts);
  if (route instanceof DomainError) {
    await takeHold(holdOf(request, facts));
    throw route;
  }
  const placement = newPlacement(deps, request, facts, route, now);
  await insertPlacement(trx, placement);
  // The balance moves last: the org's row, which every placement of the org updates, then stays
  // locked only until the commit (with a balance.low event's writes when the hold crosses the
  // threshold); a refused hold rolls the placement back.
  await takeHold(placement.hold_paise);
  return { placement, provider: route.provider };
}

/** What the first step came to: a replay, a key whose owner is still placing, or a placement to make. */
type FirstStep =
  { kind: 'replay'; call: Schemas['CallCreated'] } | { kind: 'in_flight' } | ({ kind: 'placement' } & Reserved);

/**
 * Asks the provider for a reserved placement. A refusal voids the placement and throws upstream_error;
 * no answer leaves it to recovery and throws service_unavailable (see placeCall).
 */
export async function askProvider(deps: AppDeps, placement: PlacementRow, provider: VoiceProvider): Promise<Placed> {
  const labels = { provider: provider.name };
  const started = performance.now();
  const observe = () => deps.metrics.providerPlacementSeconds.observe(labels, (performance.now() - started) / 1000);
  let placed: Placed;
  try {
    placed = await provider.place({
      callId: placement.id,
      toE164: placement.to_e164,
      fromE164: placement.from_e164,
      language: placement.language,
      maxDurationSec: placement.max_duration_sec,
      placedAt: placement.created_at,
      settings: placement.provider_settings,
      signal: AbortSignal.timeout(deps.config.providerTimeoutMs),
    });
  } catch (error) {
    observe();
    if (error instanceof ProviderRefusedError) {
      deps.metrics.providerPlacements.inc({ ...labels, outcome: 'refused' });
      await deps.db.transaction().execute((trx) => voidPlacement(trx, placement.id));
      throw new DomainError('upstream_error', error.message);
    }
    deps.metrics.providerPlacements.inc({ ...labels, outcome: 'unknown' });
    deps.logger.warn(
      { provider: provider.name, callId: placement.id, err: error },
      'the voice provider did not answer a placement; the call is reconciled with it, never dialed again',
    );
    const recoverAt = new Date(deps.clock.now().getTime() + deps.config.providerReconcileAfterS * 1000);
    await deps.db.transaction().execute(async (trx) => {
      if (await lockPlacement(trx, placement.id)) await markPlacementUnknown(trx, placement.id, recoverAt);
    });
    throw unknownOutcome();
  }
  observe();
  return placed;
}

/** Asks the provider for a reserved placement and settles it; see placeCall for what it throws. */
export async function dialPlacement(
  deps: AppDeps,
  placement: PlacementRow,
  provider: VoiceProvider,
): Promise<Schemas['CallCreated']> {
  const placed = await askProvider(deps, placement, provider);
  const call = await recorderFor(deps, provider).record(placement, placed);
  if (!call) throw unknownOutcome();
  return toCallCreated(call);
}

/** The answer while a placement's outcome is being checked with its provider. */
function unknownOutcome(): DomainError {
  return new DomainError(
    'service_unavailable',
    'The voice provider did not confirm the call in time; it is being checked with the provider and will not be dialed twice. Retry with the same Idempotency-Key to get its outcome.',
    { headers: { 'Retry-After': '5' } },
  );
}

/** A campaign's batch of attempts, all placed for one org and mode by one agent with the same metadata. */
export interface CampaignBatch {
  auth: PlacingOrg;
  agentId: string;
  metadata: Schemas['CallCreate']['metadata'];
  attempts: Array<CampaignAttempt & { toE164: string }>;
}

/**
 * What a batch's first transaction made of one attempt: a reserved placement, or why not (its number is
 * on the do-not-call list, its campaign did not record it, the org's cap or its credits ran out first).
 */
export type BatchedReservation =
  | { outcome: 'reserved'; placement: PlacementRow }
  | { outcome: 'suppressed' | 'not_recorded' | 'call_cap' | 'insufficient_credits' };

/**
 * A campaign batch's first transaction: each attempt goes through the checks of POST /calls in their
 * order, the batch-wide ones once (agent, plan, then the org's row lock with its cap counted once), the
 * do-not-call list read for all numbers in one statement; attempts past the cap, then past the credits,
 * are refused in the batch's order. `record` (the campaign's bookkeeping) is given the attempts about to
 * be placed and returns the contact ids it recorded; only those get their hold (one movement for all) and
 * their placement (one statement). Returns the provider and each attempt's reservation, in order.
 * Throws DomainError not_found (agent_id), forbidden (no plan) or upstream_error (provider not
 * configured), having written nothing.
 */
export async function reserveCampaignPlacements(
  deps: AppDeps,
  batch: CampaignBatch,
  record: (trx: Db, attempts: Array<{ attempt: CampaignAttempt; callId: string }>) => Promise<Set<string>>,
): Promise<{ provider: VoiceProvider | null; reservations: BatchedReservation[] }> {
  const { auth } = batch;
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const agent = await findAgentInOrg(trx, auth.accountOrgId, batch.agentId);
    if (!agent) throw notFound('agent', 'agent_id');
    if (!(await hasActivePlan(trx, auth.orgId)))
      throw new DomainError('forbidden', 'The organisation has no active plan.');
    const suppressed = await findSuppressed(
      trx,
      auth.orgId,
      batch.attempts.map((attempt) => attempt.toE164),
    );
    const slots = await lockCallSlots(trx, auth.orgId);
    // Read under the org's row lock: the balance cannot move before the holds are taken.
    const org = await findOrg(trx, auth.orgId);
    if (!org) throw new Error(`the placing org ${auth.orgId} does not exist`);
    const holdPaise = holdFor(agent.max_duration_sec, agent.rate_paise_per_minute);
    let free = slots === null ? Number.POSITIVE_INFINITY : Math.max(0, slots.cap - slots.inProgress);
    let affordable = holdPaise === 0 ? Number.POSITIVE_INFINITY : Math.floor(org.balance_paise / holdPaise);
    const reservations: Array<BatchedReservation | null> = batch.attempts.map((attempt) => {
      if (suppressed.has(attempt.toE164)) return { outcome: 'suppressed' };
      if (free === 0) return { outcome: 'call_cap' };
      if (affordable === 0) return { outcome: 'insufficient_credits' };
      free -= 1;
      affordable -= 1;
      return null;
    });
    const chosen = reservations.flatMap((reservation, index) => (reservation === null ? [index] : []));
    if (chosen.length === 0) return { provider: null, reservations: reservations as BatchedReservation[] };
    // Asked after the checks above, as for one call; its refusal rolls the whole batch back.
    const { provider, settings } = routeFor(deps, auth, agent);
    const placements = new Map(
      chosen.map((index) => {
        const attempt = batch.attempts[index]!;
        const placement: PlacementRow = {
          id: randomUUID(),
          org_id: auth.orgId,
          agent_id: agent.id,
          state: 'pending',
          provider: provider.name,
          provider_settings: settings,
          from_e164: agent.from_e164 ?? org.default_from_e164 ?? DEFAULT_FROM_E164,
          to_e164: attempt.toE164,
          language: agent.language,
          max_duration_sec: agent.max_duration_sec,
          rate_paise_per_minute: agent.rate_paise_per_minute,
          hold_paise: holdPaise,
          metadata: batch.metadata ?? {},
          idempotency_key: null,
          campaign_id: attempt.campaignId,
          campaign_contact_id: attempt.contactId,
          campaign_attempt: attempt.attempt,
          created_at: now,
          recover_at: new Date(now.getTime() + deps.config.providerTimeoutMs + PLACEMENT_RECOVERY_GRACE_MS),
        };
        return [index, placement] as const;
      }),
    );
    const recorded = await record(
      trx,
      chosen.map((index) => ({ attempt: batch.attempts[index]!, callId: placements.get(index)!.id })),
    );
    const kept: PlacementRow[] = [];
    for (const index of chosen) {
      const placement = placements.get(index)!;
      if (recorded.has(batch.attempts[index]!.contactId)) {
        kept.push(placement);
        reservations[index] = { outcome: 'reserved', placement };
      } else {
        reservations[index] = { outcome: 'not_recorded' };
      }
    }
    if (!(await reserveHolds(trx, { orgId: auth.orgId, paise: holdPaise, count: kept.length }))) {
      throw new Error(`the holds of org ${auth.orgId} no longer fit under its row lock`);
    }
    await insertPlacements(trx, kept);
    return { provider, reservations: reservations as BatchedReservation[] };
  });
}

/**
 * Places a call, or with an Idempotency-Key replays the response of the key's first request (waiting
 * while that request is still with the provider). Throws DomainError not_found (agent_id), forbidden
 * (no plan, or a number on the do-not-call list), too_many_requests (concurrency cap), insufficient_credits, upstream_error (provider refused or not configured; nothing charged),
 * idempotency_conflict, or service_unavailable when the provider's answer never came (the call is then
 * reconciled with the provider: it ends up either placed once or voided with its hold returned).
 */
export async function placeCall(
  deps: AppDeps,
  request: PlaceCallRequest,
): Promise<{ call: Schemas['CallCreated']; replayed: boolean }> {
  const { orgId } = request.auth;
  const key = request.idempotencyKey;
  for (;;) {
    const now = deps.clock.now();
    const quick = key === undefined ? await reserveWithoutTransaction(deps, request, now) : null;
    const step: FirstStep =
      quick && 'placement' in quick
        ? { kind: 'placement', ...quick }
        : await firstStepSlots(deps).run(orgId, () =>
            deps.db.transaction().execute(async (trx): Promise<FirstStep> => {
              if (key !== undefined) {
                const claim = await claimOrReplay(trx, { orgId, key, body: request.body, now });
                if (!claim.claimed)
                  return claim.response ? { kind: 'replay', call: claim.response } : { kind: 'in_flight' };
              }
              return { kind: 'placement', ...(await reservePlacement(trx, deps, request, now, quick?.facts)) };
            }),
          );
    if (step.kind === 'replay') return { call: step.call, replayed: true };
    if (step.kind === 'placement')
      return { call: await dialPlacement(deps, step.placement, step.provider), replayed: false };
    // Its provider never answered: nothing to wait for until reconciliation settles it.
    if (await isKeyPlacementUnknown(deps.db, orgId, key!)) throw unknownOutcome();
    const response = await awaitResponse(deps.db, {
      orgId,
      key: key!,
      timeoutMs: deps.config.providerTimeoutMs + PLACEMENT_RECOVERY_GRACE_MS,
      pollMs: IDEMPOTENCY_POLL_MS,
    });
    if (response) return { call: response, replayed: true };
    // The owner's placement came to nothing and freed the key: claim it afresh.
  }
}
