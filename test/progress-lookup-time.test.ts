// Time passes while the progress worker looks a call up. A call of a provider that looks up in the
// process, whose next step falls due during its own lookup, is due again at once, at that step's time;
// it is put off with a lease only when it is to be hung up at its deadline after the commit. (A lease
// there once kept such calls, and the campaign that placed them, waiting some twenty seconds.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDueCalls } from '../src/calls/progress-worker.js';
import { SimulatedProvider } from '../src/calls/provider/simulator/provider.js';
import { planCall } from '../src/calls/provider/simulator/script.js';
import type { LookupResult, PlaceRequest, ProviderCallRef, VoiceProvider } from '../src/calls/provider/types.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp } from './support/app.js';
import { testNumber } from './support/calls.js';

const STEP_MS = 1_000;
/** How long each lookup of the slow simulator takes on the test's clock. */
const LOOKUP_MS = 2 * STEP_MS;

const clock = new ManualClock();

/** The simulator's script, answered in the process but slowly: each lookup moves the test's clock on. */
class SlowSimulator implements VoiceProvider {
  readonly name = 'slowsim';
  readonly secondMs = STEP_MS;
  readonly lookupsPerSecond = Number.POSITIVE_INFINITY;
  readonly lookupIsLocal = true;
  private readonly script = new SimulatedProvider(STEP_MS);

  place(request: PlaceRequest) {
    return this.script.place(request);
  }
  stop(call: ProviderCallRef, request: { connected: boolean; at: Date; signal: AbortSignal }) {
    return this.script.stop(call, request);
  }
  readWebhook() {
    return this.script.readWebhook();
  }
  async lookup(call: ProviderCallRef, request: { now: Date; signal: AbortSignal }): Promise<LookupResult> {
    const found = await this.script.lookup(call, request);
    clock.advance(LOOKUP_MS);
    return found;
  }
}

const slow = new SlowSimulator();
let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, {
    clock,
    workers: false,
    providers: [{ name: slow.name, settings: [], requires: [], create: () => slow }],
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('a step that falls due while its call is looked up', () => {
  it('is looked at again at its own time, not after a lease', async () => {
    const org = await createTestOrg(database.db, { agent: { provider: slow.name } });
    const to = testNumber('7777');
    const { data } = await app.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: to } });
    const placed = data!.data;
    const placedAt = Date.parse(placed.created_at);
    const [first, second] = planCall(to, '').steps.map(({ offsetSec }) => placedAt + offsetSec * STEP_MS);
    // Due at the script's first step; the next one comes due before the lookup is back.
    clock.set(first!);
    expect(second! - first!).toBeLessThanOrEqual(LOOKUP_MS);

    expect(await advanceDueCalls(app.deps)).toBe(1);

    const row = await database.db
      .selectFrom('calls')
      .select(['status', 'next_step_at'])
      .where('id', '=', placed.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('dialing');
    expect(row.next_step_at?.toISOString()).toBe(new Date(second!).toISOString());
  });
});
