// The HTTP scenarios: what each sends to the service, and for reads the service function whose SQL
// the baseline replays (the one the operation's handler calls, with the same arguments).
import { closeAppDeps, createAppDeps, type AppDeps } from '../../src/app-deps.js';
import type { Db } from '../../src/database/connect.js';
import { DEFAULT_LIMIT } from '../../src/contract/pagination.js';
import * as calls from '../../src/calls/service.js';
import * as contacts from '../../src/contacts/service.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import * as webhooks from '../../src/webhooks/service.js';
import type { RequestSpec } from './load.js';
import type { BenchFixture, BenchOrg } from './seed.js';
import type { WriteBody } from './write-plan.js';

/** One load scenario. Reads carry what the baseline needs; writes run against the service only. */
export interface Scenario {
  name: string;
  title: string;
  /** The next request to the service (under /api/v1). */
  service: () => RequestSpec;
  /** Concurrent connections of the load generator, when not the API's 16 (see DASHBOARD_CONNECTIONS). */
  connections?: number;
  baseline?: {
    /** The service function the handler calls, run once to capture its SQL. */
    capture: (db: Db) => Promise<unknown>;
    /** The next request to the baseline (path `/<name>` or `/<name>/<id>`). */
    next: () => RequestSpec;
    /** A parameter value in the captured SQL that the baseline replaces with the request's id. */
    idParameter?: string;
  };
  /** A write's floor: the same transaction as the service's for each case the scenario mixes. */
  writeBaseline?: {
    /** The service function the handler calls, run twice per case to capture its SQL. */
    write: (db: Db, body: WriteBody) => Promise<unknown>;
    /** Per case (a path the write can take), two sample bodies that take it. */
    cases: Record<string, [WriteBody, WriteBody]>;
    /** The next request to the baseline: POST `/<name>/<case>` with a body. */
    next: () => RequestSpec;
  };
}

const API = '/api/v1';

/**
 * Page loads in flight at once on a dashboard scenario. Pages are read by an org's people, a few at a
 * time, not by 16 busy clients: with 16 in flight on one process the p99 measures the queue of pages
 * waiting for the event loop more than any page's own time. The API's scenarios keep 16.
 */
export const DASHBOARD_CONNECTIONS = 4;

function get(org: BenchOrg, path: string): RequestSpec {
  return { method: 'GET', path: `${API}${path}`, headers: { authorization: `Bearer ${org.key}` } };
}

/** A POST with the org's key to `API + path`, or to `fullPath` as given (the baseline's routes). */
function post(org: BenchOrg, path: string, body: unknown, fullPath = `${API}${path}`): RequestSpec {
  return {
    method: 'POST',
    path: fullPath,
    headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

/** Runs `work` with the service's dependencies over `db` (the simulated provider, the system clock). */
async function withDeps<T>(db: Db, work: (deps: AppDeps) => Promise<T>): Promise<T> {
  const deps = createAppDeps({ db, config: loadConfig(process.env), logger: createLogger('silent') });
  try {
    return await work(deps);
  } finally {
    await closeAppDeps(deps);
  }
}

/** A body for POST /contacts: number `n` either new (with `newPrefix`) or one of the seeded 100,000. */
function contactBody(n: number, isNew: boolean, newPrefix: string): WriteBody {
  return {
    phone_e164: isNew
      ? `${newPrefix}${String(n).padStart(6, '0')}`
      : `+9170${String(1 + ((n * 7919) % 100_000)).padStart(8, '0')}`,
    name: `Bench contact ${n}`,
    email: `bench${n}@example.com`,
    consent_capture: 'website_form',
    metadata: { source: 'bench', n },
  };
}

/** A body for POST /calls to number `n` (skipping numbers the simulated provider refuses). */
function callBody(agentId: string, n: number, prefix = '+9197'): WriteBody {
  return {
    agent_id: agentId,
    to_e164: `${prefix}${String(n % 100_000_000).padStart(8, '0')}`,
    metadata: { campaign: 'bench' },
  };
}

/** A cycling counter. */
function counter(): () => number {
  let n = 0;
  return () => n++;
}

function listScenario(
  name: string,
  title: string,
  org: BenchOrg,
  query: { status?: 'no_answer'; offset?: number },
): Scenario {
  const search = new URLSearchParams();
  if (query.status) search.set('status', query.status);
  if (query.offset) search.set('offset', String(query.offset));
  const path = `/calls${search.size > 0 ? `?${search}` : ''}`;
  return {
    name,
    title,
    service: () => get(org, path),
    baseline: {
      capture: (db) =>
        calls.listCalls(db, org.orgId, {
          status: query.status,
          campaignId: undefined,
          limit: DEFAULT_LIMIT,
          start: { offset: query.offset ?? 0 },
        }),
      next: () => ({ method: 'GET', path: `/${name}` }),
    },
  };
}

/** The read scenarios (each with a baseline), then the writes. `runTag` keeps new phone numbers unique per run. */
export function buildScenarios(fixture: BenchFixture, runTag: number): Scenario[] {
  const { big, small, detailCallIds } = fixture;
  const nextDetail = counter();
  const detailId = () => detailCallIds[nextDetail() % detailCallIds.length]!;
  const nextContact = counter();
  const nextFloorContact = counter();
  const nextCall = counter();
  const nextFloorCall = counter();
  const tag = String(runTag).padStart(5, '0');
  // Numbers ending in 0005 are refused by the simulated provider: skipped.
  const nextNumber = (next: () => number) => {
    const n = next();
    return n % 10_000 === 5 ? next() : n;
  };
  const page = (path: string): RequestSpec => ({ method: 'GET', path, headers: { cookie: fixture.dashboardCookie } });
  let pageDetail = 0;
  const dashboard = (name: string, title: string, next: () => string): Scenario => ({
    name: `dashboard-${name}`,
    title: `dashboard ${title}, 1,000,000-call org, ${DASHBOARD_CONNECTIONS} connections`,
    service: () => page(next()),
    connections: DASHBOARD_CONNECTIONS,
  });
  return [
    dashboard('overview', 'GET /dashboard', () => '/dashboard'),
    dashboard('calls', 'GET /dashboard/calls', () => '/dashboard/calls'),
    dashboard('calls-status', 'GET /dashboard/calls?status=no_answer', () => '/dashboard/calls?status=no_answer'),
    dashboard('call', 'GET /dashboard/calls/{id}', () => {
      pageDetail = (pageDetail + 1) % fixture.detailCallIds.length;
      return `/dashboard/calls/${fixture.detailCallIds[pageDetail]}`;
    }),
    dashboard('keys', 'GET /dashboard/keys', () => '/dashboard/keys'),
    dashboard('webhooks', 'GET /dashboard/webhooks', () => '/dashboard/webhooks'),
    dashboard('contacts', 'GET /dashboard/contacts', () => '/dashboard/contacts'),
    listScenario('calls-big', 'GET /calls, 1,000,000-call org', big, {}),
    listScenario('calls-small', 'GET /calls, 1,000-call org', small, {}),
    listScenario('calls-deep', 'GET /calls?offset=10000', big, { offset: 10_000 }),
    listScenario('calls-status', 'GET /calls?status=no_answer', big, { status: 'no_answer' }),
    {
      name: 'call-detail',
      title: 'GET /calls/{id}',
      service: () => get(big, `/calls/${detailId()}`),
      baseline: {
        capture: (db) => calls.getCall(db, big.orgId, detailCallIds[0]!),
        next: () => ({ method: 'GET', path: `/call-detail/${detailId()}` }),
        idParameter: detailCallIds[0]!,
      },
    },
    {
      name: 'webhooks-list',
      title: 'GET /webhooks (20 endpoints)',
      service: () => get(big, '/webhooks'),
      baseline: {
        capture: (db) => webhooks.listWebhooks(db, big.orgId, { limit: DEFAULT_LIMIT, offset: 0 }),
        next: () => ({ method: 'GET', path: '/webhooks-list' }),
      },
    },
    {
      name: 'contacts-upsert',
      title: 'POST /contacts (50% new, 50% update)',
      // Even requests add a number never seen before; odd ones update one of the 100,000 seeded contacts.
      service: () => {
        const n = nextContact();
        return post(big, '/contacts', contactBody(n, n % 2 === 0, `+919${tag}`));
      },
      writeBaseline: {
        write: (db, body) => contacts.upsertContact(db, big.orgId, body as never, null),
        cases: {
          new: [contactBody(1, true, `+917${tag}`), contactBody(2, true, `+917${tag}`)],
          update: [contactBody(1, false, ''), contactBody(2, false, '')],
        },
        next: () => {
          const n = nextFloorContact();
          const isNew = n % 2 === 0;
          return post(big, '', contactBody(n, isNew, `+918${tag}`), `/contacts-upsert/${isNew ? 'new' : 'update'}`);
        },
      },
    },
    {
      name: 'calls-create',
      title: 'POST /calls',
      service: () => post(big, '/calls', callBody(big.agentId, nextNumber(nextCall))),
      writeBaseline: {
        write: (db, body) =>
          withDeps(db, (deps) =>
            calls.placeCall(deps, {
              auth: {
                orgId: big.orgId,
                accountOrgId: big.orgId,
                livemode: true,
              },
              body: body as never,
              idempotencyKey: undefined,
            }),
          ),
        cases: { place: [callBody(big.agentId, 1, '+9196'), callBody(big.agentId, 2, '+9196')] },
        next: () => post(big, '', callBody(big.agentId, nextNumber(nextFloorCall)), '/calls-create/place'),
      },
    },
  ];
}

/** The scenario called `name`, built for a run now; throws when there is none. */
export function scenarioNamed(fixture: BenchFixture, name: string): Scenario {
  const scenario = buildScenarios(fixture, Math.floor(Date.now() / 1000) % 100_000).find(
    (candidate) => candidate.name === name,
  );
  if (!scenario) throw new Error(`no scenario named ${name} (see scripts/bench/scenarios.ts)`);
  return scenario;
}
