// The conformance check must fail when the contract breaks: the real app behind a proxy that breaks
// it on purpose, and for each break a run that reports a violation naming it. Breaks of different
// answers share a run; those of paging, which could hide one another, each get their own.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDir } from '../src/tools/listen/state-dir.js';
import { loadOrMakeTls } from '../src/tools/listen/stored-tls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { refusedOrgKeys, roomyOrg } from './support/refused-orgs.js';
import { startDeliveryProxy, type EditableEvent } from './support/delivery-proxy.js';
import { parseJson } from './support/json.js';
import { startMutatingProxy, type Mutation, type ProxiedResponse } from './support/mutating-proxy.js';
import { runConformance, type ConformanceReport } from '../src/conformance/runner.js';
import { formatReport } from '../src/conformance/report.js';

const SEED = 20261126;
const CASES = 3;

let database: TestDatabase;
let app: TestApp;
let receiverDir: string;
let caPem: string;

beforeAll(async () => {
  database = await createTestDatabase();
  receiverDir = await mkdtemp(path.join(tmpdir(), 'conformance-mutations-'));
  await openStateDir(receiverDir);
  const { caFile } = await loadOrMakeTls(receiverDir, '127.0.0.1');
  caPem = await readFile(caFile, 'utf8');
  app = await startTestApp(database, {
    config: {
      simulatorStepMs: 200,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      // Shorter than the request deadline, so a stalled body gets its 408 (with equal defaults the 503 wins).
      bodyTimeoutMs: 1_000,
      webhookCaCerts: [caPem],
    },
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
  await rm(receiverDir, { recursive: true, force: true });
});

/** One item of an answer, as the mutations edit it. */
type Item = Record<string, unknown> & { id?: string; event?: string };

/** A list answer as the mutations edit it: its items and its figures. */
interface Page {
  data: Item[];
  pagination: { has_more: boolean; total: number };
}

/**
 * A JSON answer with its body changed by `change` (answers that are not JSON pass unchanged); the body
 * has the shape the caller declares for the answers it edits.
 */
function editJson<T>(response: ProxiedResponse, change: (json: T) => void): ProxiedResponse {
  if (!String(response.headers['content-type'] ?? '').startsWith('application/json')) return response;
  const json = parseJson<T>(response.body);
  change(json);
  return { ...response, body: JSON.stringify(json) };
}

/** Runs the check through a proxy making `mutation`, with a fresh org; returns the report and the org. */
async function runThrough(mutation: Mutation): Promise<{ report: ConformanceReport; org: TestOrg }> {
  const org = await roomyOrg(database.db);
  const proxy = await startMutatingProxy(app.baseUrl, mutation);
  try {
    const report = await runConformance({
      baseUrl: `${proxy.origin}/api/v1`,
      apiKey: org.key,
      seed: SEED,
      cases: CASES,
      agentId: org.agentId,
      receiverDir,
      ...(await refusedOrgKeys(database.db)),
    });
    return { report, org };
  } finally {
    await proxy.close();
  }
}

/**
 * Runs the check with its webhook endpoints pointed at a hop that edits each delivered event with
 * `change` (and signs it again): the API proxy swaps the receiver's URL for the hop's in requests and
 * back in answers, and keeps the secrets the API returns.
 */
async function runWithEvents(change: (event: EditableEvent) => void): Promise<ConformanceReport> {
  const secrets = new Set<string>();
  const { tls } = await loadOrMakeTls(receiverDir, '127.0.0.1');
  const hop = await startDeliveryProxy(tls, caPem, secrets, change);
  const receiverOrigin = /https:\/\/127\.0\.0\.1:\d+/;
  try {
    const { report } = await runThrough({
      requestBody: (request) =>
        request.path.startsWith('/api/v1/webhooks')
          ? (body) => {
              const found = body.match(receiverOrigin)?.[0];
              if (!found || found === hop.origin) return body;
              hop.target = found;
              return body.replaceAll(found, hop.origin);
            }
          : undefined,
      response: (_request, response) => {
        const body = hop.target ? response.body.replaceAll(hop.origin, hop.target) : response.body;
        const secret = /"secret":"([^"]+)"/.exec(body)?.[1];
        if (secret) secrets.add(secret);
        return { ...response, body };
      },
    });
    return report;
  } finally {
    await hop.close();
  }
}

/** Every problem of every violation, one line each, with its operation. */
const problems = (report: ConformanceReport) =>
  report.violations.flatMap((violation) => violation.problems.map((problem) => `${violation.operationId}: ${problem}`));

describe('breaks that touch different answers, caught in one run each', { timeout: 120_000 }, () => {
  // A run costs tens of seconds of CPU, so breaks that cannot hide one another share one: each test
  // below still looks for the problem its own break causes.
  describe('required headers dropped', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      ({ report } = await runThrough({
        response: (_request, response) => {
          const headers = { ...response.headers };
          delete headers['request-id'];
          delete headers['x-ratelimit-remaining'];
          if (response.status === 429) delete headers['retry-after'];
          return { ...response, headers };
        },
      }));
    }, 120_000);

    it('Request-Id dropped', () => {
      expect(problems(report)).toContainEqual(expect.stringMatching(/required header Request-Id is missing/));
    });

    it('X-RateLimit-Remaining dropped', () => {
      expect(problems(report)).toContainEqual(
        expect.stringMatching(/required header X-RateLimit-Remaining is missing/),
      );
    });

    it('Retry-After dropped from a 429', () => {
      expect(problems(report)).toContainEqual(
        expect.stringMatching(/^listAgents: the required header Retry-After is missing from the 429 answer/),
      );
    });
  });

  describe('one operation answered wrongly each', () => {
    let report: ConformanceReport;
    let org: TestOrg;
    beforeAll(async () => {
      ({ report, org } = await runThrough({
        response: (request, response) => {
          if (request.method === 'GET' && /^\/api\/v1\/calls\/[0-9a-f-]{36}$/.test(request.path))
            return editJson<{ data?: Item }>(response, (json) => {
              if (json.data) json.data.created_at = 1764000000;
            });
          if (request.method === 'POST' && request.path === '/api/v1/webhooks' && response.status === 201)
            return { ...response, status: 200 };
          if (request.method === 'GET' && /^\/api\/v1\/events(\?|$)/.test(request.path))
            return editJson<Page>(response, (json) => {
              json.data = json.data?.filter((event) => event.event !== 'call.busy');
            });
          return response;
        },
      }));
    }, 120_000);

    it("a field's type changed in a response", () => {
      expect(problems(report)).toContainEqual(expect.stringMatching(/^getCall: .*\/data\/created_at must be string/));
    });

    it('201 answered as 200 to POST /webhooks, and no endpoint left behind', async () => {
      expect(problems(report)).toContainEqual(expect.stringMatching(/^createWebhook: status 200 is not declared/));
      const left = await database.db
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('org_id', '=', org.orgId)
        // A deleted endpoint's row goes with the clean-up after the 204; it is marked deleted at once.
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      expect(Number(left.count)).toBe(0);
    });

    it('GET /events never lists call.busy', () => {
      expect(problems(report)).toContainEqual(
        expect.stringMatching(
          /^listEvents: GET \/events does not list the call\.busy event evt_\w+ the receiver was delivered/,
        ),
      );
      expect(problems(report)).toContainEqual(
        expect.stringMatching(/^listEvents: GET \/events\?kind=call\.busy does not list the call\.busy event evt_\w+/),
      );
    });
  });

  describe('delivered events changed', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      report = await runWithEvents((event) => {
        if (event.event === 'webhook.test') event.data.message = 42;
        if (event.event === 'call.completed') event.data.duration_sec = String(event.data.duration_sec);
      });
    }, 120_000);

    it('a field of a delivered webhook.test event changed', () => {
      expect(problems(report)).toContainEqual(
        expect.stringMatching(
          /^\(event webhook\.test\): the webhook\.test body does not match its schema: \/data\/message must be string/,
        ),
      );
    });

    it('a field of a delivered call.completed event changed', () => {
      expect(problems(report)).toContainEqual(
        expect.stringMatching(
          /^\(event call\.completed\): the call\.completed body does not match its schema: \/data\/duration_sec must be integer/,
        ),
      );
    });
  });
});

describe('breaks of paging, each in a run of its own', { timeout: 120_000 }, () => {
  it('has_more forced false', async () => {
    const { report } = await runThrough({
      response: (_request, response) =>
        editJson<Partial<Page>>(response, (json) => {
          if (json.pagination) json.pagination.has_more = false;
        }),
    });
    expect(problems(report)).toContainEqual(
      expect.stringMatching(/^listCalls: has_more is false with \d+ of \d+ items/),
    );
  });

  it('a total that changes on every one-page read of GET /contacts', async () => {
    // The list never seems to stand still: after its last walk it is judged as it is.
    let reads = 0;
    const { report } = await runThrough({
      response: (request, response) => {
        if (request.method !== 'GET' || request.path !== '/api/v1/contacts?limit=100&offset=0') return response;
        reads += 1;
        return editJson<Page>(response, (json) => {
          json.pagination.total += reads;
        });
      },
    });
    expect(problems(report)).toContainEqual(expect.stringMatching(/^listContacts: pagination\.total changed from/));
    expect(reads).toBeGreaterThanOrEqual(10);
  });

  it('offset stripped from the request of GET /calls', async () => {
    const { report } = await runThrough({
      request: (request) => {
        const url = new URL(request.path, 'http://proxy');
        if (request.method !== 'GET' || url.pathname !== '/api/v1/calls') return request;
        url.searchParams.delete('offset');
        return { ...request, path: `${url.pathname}${url.search}` };
      },
    });
    expect(problems(report)).toContainEqual(
      expect.stringMatching(/^listCalls: asked for offset=2, pagination.offset is 0/),
    );
  });

  it('a cursor page that skips the item next to its cursor', async () => {
    const { report } = await runThrough({
      response: (request, response) =>
        request.method === 'GET' && /[?&]starting_after=/.test(request.path)
          ? editJson<Page>(response, (json) => {
              json.data?.shift();
            })
          : response,
    });
    expect(problems(report)).toContainEqual(
      expect.stringMatching(/^listCalls: starting_after=\S+ limit=1: skips \S+, item \d+ of the offset order/),
    );
  });

  it('a cursor page that repeats its cursor item', async () => {
    // As a keyset condition of <= for <: the page after a cursor starts with the cursor item itself.
    const items = new Map<string | undefined, Item>();
    const { report } = await runThrough({
      response: (request, response) =>
        editJson<{ data?: Item | Item[] }>(response, (json) => {
          if (!Array.isArray(json.data)) return;
          for (const item of json.data) items.set(item.id, item);
          const query = new URL(request.path, 'http://proxy').searchParams;
          const cursor = items.get(query.get('starting_after') ?? '');
          if (request.method === 'GET' && cursor)
            json.data = [cursor, ...json.data].slice(0, Number(query.get('limit') ?? 50));
        }),
    });
    expect(problems(report)).toContainEqual(
      expect.stringMatching(/^listContacts: starting_after=(\S+) limit=\d: repeats the cursor item \1/),
    );
  });
});

it(
  'exits 1 from the command line, with the spec from --spec, curl lines, JUnit and JSON reports, and no key printed',
  { timeout: 180_000 },
  async () => {
    const org = await roomyOrg(database.db);
    // The proxy also hides the published spec, as Prism does (it answers 404 to a path the spec does
    // not declare): the check takes the spec from the file named by --spec.
    const proxy = await startMutatingProxy(app.baseUrl, {
      response: (request, response) => {
        if (/^\/api\/v1\/openapi\.(json|yaml)/.test(request.path))
          return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
        const headers = { ...response.headers };
        delete headers['request-id'];
        return { ...response, headers };
      },
    });
    const junit = path.join(receiverDir, 'report.xml');
    const json = path.join(receiverDir, 'report.json');
    try {
      const run = await new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            'dist/src/main.js',
            'conformance',
            '--base-url',
            `${proxy.origin}/api/v1`,
            '--spec',
            'generated/openapi.json',
            '--cases',
            '1',
            '--seed',
            '7',
            '--agent-id',
            org.agentId,
            '--junit',
            junit,
            '--json',
            json,
          ],
          {
            env: { ...process.env, VOICE_CALL_API_KEY: org.key, WEBHOOK_LISTEN_DIR: receiverDir },
            maxBuffer: 64 * 1024 * 1024,
          },
          (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
        );
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('the required header Request-Id is missing');
      expect(run.stdout).toContain(`repeat: curl -i -X GET '${proxy.origin}/api/v1/`);
      expect(run.stdout).toContain(`'Authorization: Bearer '"$VOICE_CALL_API_KEY"''`);
      expect(run.stdout).not.toContain(org.key);
      const xml = await readFile(junit, 'utf8');
      expect(xml).toMatch(/<testsuites name="conformance" tests="\d+" failures="[1-9]\d*">/);
      expect(xml).toContain('<failure message="the required header Request-Id is missing');
      expect(xml).not.toContain(org.key);
      const report = JSON.parse(await readFile(json, 'utf8')) as ConformanceReport;
      expect(report.violations.length).toBeGreaterThan(0);
      expect(report.violations[0]!.curl).toContain('$VOICE_CALL_API_KEY');
    } finally {
      await proxy.close();
    }
  },
);

it('walks a list again when it changed during the walk, and reports nothing', { timeout: 120_000 }, async () => {
  // The first one-page read of GET /contacts misses the newest contact, as if it were created just
  // after that read: the pages that follow disagree with it until the walk is made again.
  let referenceReads = 0;
  const { report } = await runThrough({
    response: (request, response) => {
      if (request.method !== 'GET' || request.path !== '/api/v1/contacts?limit=100&offset=0') return response;
      referenceReads += 1;
      if (referenceReads > 1) return response;
      return editJson<Page>(response, (json) => {
        json.data.shift();
        json.pagination.total -= 1;
      });
    },
  });
  expect(report.violations, formatReport(report)).toEqual([]);
  // Two walks, each reading the one-page list before and after.
  expect(referenceReads).toBeGreaterThanOrEqual(4);
});

it('finds nothing when the proxy changes nothing', { timeout: 120_000 }, async () => {
  const { report } = await runThrough({});
  expect(report.violations, formatReport(report)).toEqual([]);
});
