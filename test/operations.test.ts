// What an operator sees: the metrics server (METRICS_PORT) with every metric the service promises,
// moving as traffic flows; log lines that carry the instance id and an incoming traceparent (into the
// logs of the deliveries the request caused), probes at debug and an abandoned delivery's warning; and
// the retention job removing old history while keeping each endpoint's last 100 attempts.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer, type MetricsServer } from '../src/observability/metrics-server.js';
import { watchWebhookQueue } from '../src/observability/metrics.js';
import { runRetention } from '../src/maintenance/retention.js';
import { emitEvents } from '../src/webhooks/outbox.js';
import { ManualClock, rawRequest, type TestOrg } from './support/app.js';
import { parseJson, type Schemas } from './support/json.js';
import { testNumber, waitFor } from './support/calls.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { contactCreated, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

const log: Array<Record<string, unknown>> = [];
let env: WebhookEnv;
let org: TestOrg;
let metricsServer: MetricsServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  env = await webhookEnv({
    config: { logLevel: 'debug' },
    logStream: { write: (line: string) => void log.push(parseJson(line)) },
  });
  env.worker({ start: true });
  org = env.org;
  watchWebhookQueue(env.app.deps.metrics, env.database.db);
  const registry = env.app.deps.metrics.registry;
  metricsServer = await startMetricsServer(
    { contentType: registry.contentType, metrics: () => registry.metrics() },
    env.app.deps.readiness,
    { host: '127.0.0.1', port: 0 },
  );
});

afterAll(async () => {
  await metricsServer?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await env?.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsServer.port}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The sum of a metric's samples whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describe('the metrics server', () => {
  it('serves every promised metric, and they move when traffic flows', async () => {
    const before = await scrape();
    for (const name of [
      'voice_call_http_request_duration_seconds',
      'voice_call_http_requests_in_flight',
      'voice_call_rate_limit_rejections_total',
      'voice_call_webhook_attempts_total',
      'voice_call_webhook_deliveries_abandoned_total',
      'voice_call_webhook_queue_depth',
      'voice_call_webhook_queue_oldest_due_age_seconds',
      'voice_call_call_status_changes_total',
      'voice_call_retention_deleted_rows_total',
      'voice_call_retention_last_success_timestamp_seconds',
      'voice_call_webhook_event_to_first_attempt_seconds',
      'voice_call_build_info',
      'process_cpu_seconds_total',
    ]) {
      expect(before, name).toContain(`# TYPE ${name} `);
    }
    // Counters a dashboard alerts on exist before the first event they count.
    for (const reason of ['org_rate_limit', 'auth_failures', 'test_sends', 'redeliveries']) {
      expect(before, reason).toContain(`voice_call_rate_limit_rejections_total{reason="${reason}"} 0`);
    }
    expect(before).toContain('voice_call_webhook_attempts_total{outcome="dns"} 0');
    expect(before).toContain('voice_call_call_status_changes_total{from="queued",to="canceled"} 0');
    expect(before).toMatch(
      new RegExp(`^voice_call_build_info\\{version="[^"]+",node="${process.versions.node}"\\} 1$`, 'm'),
    );

    const receiver = await startReceiver(answer(200));
    receivers.push(receiver);
    await register(env, receiver.url);
    const headers = { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' };
    for (let i = 0; i < 3; i += 1) {
      expect(
        (
          await rawRequest(env.app, 'POST', '/contacts', {
            headers,
            body: JSON.stringify({ phone_e164: testNumber('1212'), consent_capture: 'manual' }),
          })
        ).status,
      ).toBe(201);
    }
    const placed = await rawRequest<Schemas['CallCreatedResponse']>(env.app, 'POST', '/calls', {
      headers,
      body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber('4545') }),
    });
    expect(placed.status).toBe(201);
    await receiver.waitFor(3, 5_000);

    await waitFor(
      'the attempts to be counted',
      async () => sample(await scrape(), 'voice_call_webhook_attempts_total', { outcome: 'success' }) >= 3,
    );
    const after = await scrape();
    expect(
      sample(after, 'voice_call_http_request_duration_seconds_count', { operation: 'upsertContact', status: '201' }),
    ).toBe(
      sample(before, 'voice_call_http_request_duration_seconds_count', { operation: 'upsertContact', status: '201' }) +
        3,
    );
    expect(
      sample(after, 'voice_call_call_status_changes_total', { from: 'none', to: 'queued' }),
    ).toBeGreaterThanOrEqual(1);
    // Each contact.created event's first attempt was timed from its delivery being queued.
    expect(sample(after, 'voice_call_webhook_event_to_first_attempt_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(
      sample(after, 'voice_call_db_pool_connections') + sample(after, 'voice_call_webhook_queue_depth'),
    ).toBeGreaterThanOrEqual(0);

    const probes = await fetch(`http://127.0.0.1:${metricsServer.port}/readyz`);
    expect(probes.status).toBe(200);
    expect(await probes.json()).toEqual({ status: 'ready', database: 'ok' });
  });
});

describe('the logs', () => {
  it('name the instance on every line, carry a request traceparent into its deliveries, and keep probes at debug', async () => {
    const receiver = await startReceiver(answer(500));
    receivers.push(receiver);
    const { id } = await register(env, receiver.url);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const response = await rawRequest(env.app, 'POST', '/contacts', {
      headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', traceparent },
      body: JSON.stringify({ phone_e164: testNumber('3434'), consent_capture: 'manual' }),
    });
    expect(response.status).toBe(201);
    await receiver.waitFor(1, 5_000);
    await waitFor('the failed attempt to be logged', () =>
      log.some((line) => line.msg === 'webhook attempt failed' && line.webhookId === id),
    );
    await fetch(`${env.app.baseUrl}/readyz`);

    expect(log.length).toBeGreaterThan(0);
    expect(log.every((line) => typeof line.instance === 'string' && line.instance.length > 0)).toBe(true);
    const request = log.find((line) => line.msg === 'request' && line.traceparent === traceparent);
    expect(request).toMatchObject({ operationId: 'upsertContact', status: 201 });
    expect(log.find((line) => line.msg === 'webhook attempt failed' && line.webhookId === id)).toMatchObject({
      traceparent,
    });
    const probe = log.find((line) => line.msg === 'request' && line.path === '/readyz');
    expect(probe?.level).toBe(20);
  });

  it('log a delivery that succeeded at debug, naming the request that caused it', async () => {
    const receiver = await startReceiver(answer(204));
    receivers.push(receiver);
    const { id } = await register(env, receiver.url);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b8-01';
    const response = await rawRequest(env.app, 'POST', '/contacts', {
      headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', traceparent },
      body: JSON.stringify({ phone_e164: testNumber('3435'), consent_capture: 'manual' }),
    });
    expect(response.status).toBe(201);
    const delivered = await waitFor('the delivery to be logged', () =>
      log.find((line) => line.msg === 'webhook delivered' && line.webhookId === id),
    );
    expect(delivered).toMatchObject({ level: 20, traceparent, event: 'contact.created', attempt: 1, status: 204 });
    expect(typeof delivered.durationMs).toBe('number');
  });

  it('say when the client closed the connection before its answer was sent', async () => {
    // The receiver holds a test send for a second; the client gives up long before.
    const receiver = await startReceiver((_request, response) => {
      setTimeout(() => response.writeHead(200).end('ok'), 1_000);
    });
    receivers.push(receiver);
    const { id } = await register(env, receiver.url);
    const gaveUp = new AbortController();
    const sent = fetch(`${env.app.apiUrl}/webhooks/${id}/test`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.key}` },
      signal: gaveUp.signal,
    });
    await receiver.waitFor(1, 10_000);
    gaveUp.abort();
    await expect(sent).rejects.toThrow();
    const line = await waitFor('the closed request to be logged', () =>
      log.find(
        (entry) => entry.msg === 'request' && entry.operationId === 'testWebhook' && String(entry.path).includes(id),
      ),
    );
    expect(line).toMatchObject({ clientClosed: true, level: 30 });
    // An answered request says nothing of the kind.
    const answered = log.find((entry) => entry.msg === 'request' && entry.operationId === 'upsertContact');
    expect(answered).toBeDefined();
    expect(answered).not.toHaveProperty('clientClosed');
  });

  it('warn once when a delivery is abandoned after its last attempt', async () => {
    const clock = new ManualClock();
    const failing = await webhookEnv({
      clock,
      logStream: { write: (line: string) => void log.push(parseJson(line)) },
      config: { logLevel: 'info' },
    });
    try {
      const receiver = await startReceiver(answer(500));
      receivers.push(receiver);
      const { id } = await register(failing, receiver.url);
      const [eventId] = await failing.database.db
        .transaction()
        .execute((trx) => emitEvents(trx, failing.org.orgId, 'contact.created', [contactCreated()], null));
      const worker = failing.worker();
      // The manual clock started before the event was stored (due at the database's now()).
      clock.advance(60_000);
      for (let attempt = 0; attempt < 7; attempt += 1) {
        await worker.runOnce();
        clock.advance(13 * 3_600_000);
      }
      const warnings = log.filter((line) => line.msg === 'webhook delivery abandoned after its last attempt failed');
      expect(warnings.filter((line) => line.eventId === eventId)).toEqual([
        expect.objectContaining({ level: 40, webhookId: id, eventId, event: 'contact.created', attempts: 7 }),
      ]);
    } finally {
      await failing.close();
    }
  });
});

describe('the retention job', () => {
  it('removes old deliveries, events, timelines and keys, and keeps each endpoint its last 100 attempts', async () => {
    const db = env.database.db;
    const receiver = await startReceiver(answer(200));
    receivers.push(receiver);
    const { id } = await register(env, receiver.url);
    // 130 events delivered to the endpoint, then made 40 days old.
    await db.transaction().execute((trx) =>
      emitEvents(
        trx,
        org.orgId,
        'contact.created',
        Array.from({ length: 130 }, () => contactCreated()),
        null,
      ),
    );
    await receiver.waitFor(130, 15_000);
    await waitFor('every delivery to finish', async () => {
      const pending = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return pending === undefined;
    });
    await sql`UPDATE webhook_deliveries SET created_at = now() - interval '40 days' WHERE webhook_id = ${id}`.execute(
      db,
    );
    await sql`UPDATE events SET created_at = now() - interval '40 days'
              WHERE id IN (SELECT event_id FROM webhook_deliveries WHERE webhook_id = ${id})`.execute(db);
    // A call's timeline from 100 days ago, and an expired Idempotency-Key.
    const placed = await rawRequest<Schemas['CallCreatedResponse']>(env.app, 'POST', '/calls', {
      headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'old-key' },
      body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber('5656') }),
    });
    const callId = placed.body.data.id;
    await sql`UPDATE call_timeline SET at = now() - interval '100 days' WHERE call_id = ${callId}`.execute(db);
    await sql`UPDATE call_idempotency_keys SET created_at = now() - interval '2 days' WHERE key = 'old-key'`.execute(
      db,
    );

    // Import records: one ended past the audit log's keeping period, one ended lately, one running.
    const imports = await sql<{ id: string; status: string; finished_at: Date | null }>`
      INSERT INTO contact_imports (org_id, source, status, started_at, finished_at) VALUES
        (${org.orgId}, 'cli', 'done', now() - interval '400 days', now() - interval '400 days'),
        (${org.orgId}, 'cli', 'failed', now() - interval '1 day', now() - interval '1 day'),
        (${org.orgId}, 'cli', 'running', now() - interval '400 days', NULL)
      RETURNING id, status, finished_at`.execute(db);

    const report = await runRetention(env.app.deps);
    expect(report).not.toBeNull();
    expect(report!.contact_imports).toBe(1);
    const importsLeft = await db.selectFrom('contact_imports').select('id').orderBy('id').execute();
    expect(importsLeft.map((row) => row.id).sort()).toEqual(
      imports.rows
        .slice(1)
        .map((row) => row.id)
        .sort(),
    );
    expect(report!.webhook_deliveries).toBeGreaterThanOrEqual(30);
    expect(report!.call_timeline).toBeGreaterThanOrEqual(1);
    expect(report!.call_idempotency_keys).toBeGreaterThanOrEqual(1);

    const attempts = await db
      .selectFrom('webhook_attempts')
      .select('delivery_id')
      .where('webhook_id', '=', id)
      .execute();
    expect(attempts).toHaveLength(100);
    const deliveries = await db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).execute();
    expect(deliveries).toHaveLength(100);
    expect(new Set(deliveries.map((row) => row.id))).toEqual(new Set(attempts.map((row) => row.delivery_id)));
    const events = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM events e WHERE e.created_at < now() - interval '30 days'
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`.execute(db);
    expect(events.rows[0]!.n).toBe(0);
    expect(await db.selectFrom('call_timeline').select('id').where('call_id', '=', callId).execute()).toEqual([]);

    // The deliveries list still answers, and its total matches what is left.
    const listed = await rawRequest<Schemas['WebhookDeliveryList']>(
      env.app,
      'GET',
      `/webhooks/${id}/deliveries?limit=1`,
      {
        headers: { Authorization: `Bearer ${org.key}` },
      },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.pagination.total).toBe(100);
  });
});
