// Validation messages through real HTTP: a pattern or a format is said in words with the refused value
// (quoted, cut, control and bidi characters escaped), never as a regular expression, and a value that
// may be a credential (a header, a URL) is never echoed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import apiDocument from '../generated/openapi.json' with { type: 'json' };
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { patternHasWords } from '../src/contract/format-words.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale' });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const E164 = 'must be an E.164 number: a + followed by 7 to 15 digits, the first not 0';

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const answer = await rawRequest<ErrorResponse>(app, 'POST', path, {
    headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  return answer.body.error as { code: string; message: string; param: string; details: Record<string, string[]> };
}

describe('validation messages', () => {
  it('says an E.164 pattern in words with the refused value', async () => {
    const error = await post('/calls', { agent_id: org.agentId, to_e164: '0123' });
    expect(error).toEqual({
      code: 'invalid_request',
      param: 'to_e164',
      message: `to_e164: ${E164}; got "0123"`,
      details: { to_e164: [`${E164}; got "0123"`] },
    });
  });

  it('says the language tag, email and uuid forms in words', async () => {
    const contact = await post('/contacts', { phone_e164: '+919800000001', language_pref: 'english', email: 'a@' });
    expect(contact.details).toEqual({
      language_pref: [
        'must be at most 5 characters long',
        'must be a language tag: two lower-case letters, a hyphen and two capital letters, like en-IN; got "english"',
      ],
      email: ['must be an email address, like name@example.com; got "a@"'],
    });
    const call = await post('/calls', { agent_id: 'agent-1', to_e164: '+919812345678' });
    expect(call.details).toEqual({
      agent_id: ['must be a UUID, like 123e4567-e89b-12d3-a456-426614174000; got "agent-1"'],
    });
  });

  it('quotes a refused path parameter as it quotes a body field', async () => {
    const answer = await rawRequest<ErrorResponse>(app, 'GET', '/webhooks/not-a-uuid', {
      headers: { Authorization: `Bearer ${org.key}` },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      param: 'id',
      message: 'id: must be a UUID, like 123e4567-e89b-12d3-a456-426614174000; got "not-a-uuid"',
    });
  });

  it('quotes a refused value safely: escaped quotes, visible control and bidi characters, cut at 40 characters', async () => {
    const error = await post('/contacts', { phone_e164: `+91"\u202E\u0007${'9'.repeat(60)}` });
    expect(error.details.phone_e164).toEqual([
      'must be at most 16 characters long',
      `${E164}; got "+91\\"\\u202E\\u0007${'9'.repeat(34)}…"`,
    ]);
  });

  it('never echoes a header or a URL', async () => {
    const key = await post(
      '/calls',
      { agent_id: org.agentId, to_e164: '+919812345678' },
      { 'Idempotency-Key': 'has space' },
    );
    expect(key).toMatchObject({
      param: 'Idempotency-Key',
      message: 'Idempotency-Key: must be printable ASCII characters, without spaces',
    });
    const webhook = await post('/webhooks', { url: 'http://user:hunter2@example.com/', events: ['call.completed'] });
    expect(webhook.param).toBe('url');
    expect(JSON.stringify(webhook)).not.toContain('hunter2');
    expect(webhook.details.url).toContain('must be an https URL (starting with https://)');
  });

  it("says an object's key counts in words, and a bad key without the validator's summary", async () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, index]));
    const tooMany = await post('/calls', { agent_id: org.agentId, to_e164: '+919812345678', metadata: many });
    expect(tooMany.details).toEqual({ metadata: ['must hold at most 50 keys'] });
    const blankKey = await post('/calls', { agent_id: org.agentId, to_e164: '+919812345678', metadata: { '': 1 } });
    expect(Object.values(blankKey.details).flat()).toEqual(['must be at least 1 character long']);
  });

  it('lists only the first 50 failing fields of a body with thousands', async () => {
    const error = await post('/campaigns', {
      name: 'Many bad ids',
      agent_id: org.agentId,
      contacts: { contact_ids: Array.from({ length: 30_000 }, () => 0) },
      schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '09:00', end: '17:00' }] },
    });
    expect(error.param).toBe('contacts.contact_ids');
    expect(error.message).toBe('contacts.contact_ids: must hold at most 1000 items');
    const fields = Object.keys(error.details);
    expect(fields).toHaveLength(50);
    expect(fields.slice(0, 3)).toEqual(['contacts.contact_ids', 'contacts.contact_ids.0', 'contacts.contact_ids.1']);
    expect(error.details['contacts.contact_ids.48']).toEqual(['must be a string']);
  });

  it('has words for every pattern the spec declares, so no message prints a regular expression', () => {
    const patterns = new Set<string>();
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'pattern' && typeof value === 'string') patterns.add(value);
        else walk(value);
      }
    };
    walk(apiDocument);
    expect(patterns.size).toBeGreaterThan(0);
    expect([...patterns].filter((pattern) => !patternHasWords(pattern))).toEqual([]);
  });
});
