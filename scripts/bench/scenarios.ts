// The HTTP scenarios: what each sends to the service, and for reads the service function whose SQL
// the baseline replays (the one the operation's handler calls, with the same arguments).
import type { Db } from '../../src/database/connect.js';
import { DEFAULT_LIMIT } from '../../src/contract/pagination.js';
import * as calls from '../../src/calls/service.js';
import * as webhooks from '../../src/webhooks/service.js';
import type { RequestSpec } from './load.js';
import type { BenchFixture, BenchOrg } from './seed.js';

/** One load scenario. Reads carry what the baseline needs; writes run against the service only. */
export interface Scenario {
  name: string;
  title: string;
  /** The next request to the service (under /api/v1). */
  service: () => RequestSpec;
  baseline?: {
    /** The service function the handler calls, run once to capture its SQL. */
    capture: (db: Db) => Promise<unknown>;
    /** The next request to the baseline (path `/<name>` or `/<name>/<id>`). */
    next: () => RequestSpec;
    /** A parameter value in the captured SQL that the baseline replaces with the request's id. */
    idParameter?: string;
  };
}

const API = '/api/v1';

function get(org: BenchOrg, path: string): RequestSpec {
  return { method: 'GET', path: `${API}${path}`, headers: { authorization: `Bearer ${org.key}` } };
}

function post(org: BenchOrg, path: string, body: unknown): RequestSpec {
  return {
    method: 'POST',
    path: `${API}${path}`,
    headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
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
        calls.listCalls(db, org.orgId, { status: query.status, limit: DEFAULT_LIMIT, offset: query.offset ?? 0 }),
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
  const nextCall = counter();
  return [
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
      service: () => {
        const n = nextContact();
        // Even requests add a number never seen before; odd ones update one of the 100,000 seeded contacts.
        const phone =
          n % 2 === 0
            ? `+919${String(runTag).padStart(5, '0')}${String(n / 2).padStart(6, '0')}`
            : `+9170${String(1 + ((n * 7919) % 100_000)).padStart(8, '0')}`;
        return post(big, '/contacts', {
          phone_e164: phone,
          name: `Bench contact ${n}`,
          email: `bench${n}@example.com`,
          consent_capture: 'website_form',
          metadata: { source: 'bench', n },
        });
      },
    },
    {
      name: 'calls-create',
      title: 'POST /calls',
      service: () => {
        let n = nextCall();
        // Numbers ending in 0005 are refused by the simulated provider.
        if (n % 10_000 === 5) n = nextCall();
        return post(big, '/calls', {
          agent_id: big.agentId,
          to_e164: `+9197${String(n % 100_000_000).padStart(8, '0')}`,
          metadata: { campaign: 'bench' },
        });
      },
    },
  ];
}
