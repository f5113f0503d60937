// Vapi's pinned OpenAPI document (test/fixtures/vapi/), its ServerMessage schemas as an Ajv validator,
// and signed server messages built from fixtures that the validator accepts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, vapiSignature } from '../../src/calls/provider/vapi/signature.js';

/** Where the pinned vendor documents live. */
export const VAPI_FIXTURES = path.resolve('test/fixtures/vapi');

type Json = Record<string, unknown>;

let cached: Json | undefined;

/** The pinned vendor document, parsed once per test file. */
export function vapiDocument(): Json {
  cached ??= JSON.parse(readFileSync(path.join(VAPI_FIXTURES, 'openapi.json'), 'utf8')) as Json;
  return cached;
}

function schemas(document: Json): Record<string, Json> {
  return (document['components'] as { schemas: Record<string, Json> }).schemas;
}

/** The vendor's endedReason values (the enum on Call, which status-update and end-of-call-report repeat). */
export function vendorEndedReasons(): string[] {
  const call = schemas(vapiDocument())['Call']!;
  const endedReason = (call['properties'] as Record<string, { enum: string[] }>)['endedReason']!;
  return [...new Set(endedReason.enum)];
}

/**
 * A copy of the document with three defects repaired so that Ajv can compile it and payloads shaped as
 * the vendor describes pass: an empty `enum` (allows nothing; the vendor means any value) is dropped; an
 * `enum` of strings on an array type is moved to its items (what the vendor means); and `oneOf` is read
 * as `anyOf`, because the vendor's unions overlap (a message whose role is "bot" matches UserMessage,
 * SystemMessage and BotMessage alike, their `role` being any string). The pinned file is left as it is.
 */
function repaired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(repaired);
  if (!node || typeof node !== 'object') return node;
  const copy: Json = Object.fromEntries<unknown>(Object.entries(node).map(([key, value]) => [key, repaired(value)]));
  const values = copy['enum'];
  if (Array.isArray(values) && values.length === 0) delete copy['enum'];
  if (copy['oneOf']) {
    copy['anyOf'] = copy['oneOf'];
    delete copy['oneOf'];
  }
  if (Array.isArray(values) && copy['type'] === 'array' && values.every((value) => typeof value === 'string')) {
    copy['items'] = { ...(copy['items'] as Json | undefined), enum: values };
    delete copy['enum'];
  }
  return copy;
}

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
let ajv: InstanceType<typeof Ajv.default> | undefined;

/** Throws with Ajv's errors unless `data` is valid by the vendor's schema `name` (components/schemas). */
export function assertVendorSchema(name: string, data: unknown): void {
  if (!ajv) {
    ajv = new Ajv.default({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
    ajv.addSchema(repaired(vapiDocument()) as Json, 'vapi.json');
  }
  const validate = ajv.getSchema(`vapi.json#/components/schemas/${name}`) as Validator;
  if (!validate(data)) throw new Error(`not a Vapi ${name}: ${JSON.stringify(validate.errors).slice(0, 2000)}`);
}

/** Throws unless `body` is a valid `{ message: ServerMessage }` by the vendor's own schema. */
export function assertServerMessage(body: unknown): void {
  assertVendorSchema('ServerMessage', body);
}

/** Headers Vapi's HMAC credential (default plan) would send for `body` signed at `at` with `secret`. */
export function signedHeaders(secret: string, body: string, at: Date): Record<string, string> {
  const timestamp = String(at.getTime());
  return {
    'content-type': 'application/json',
    [SIGNATURE_HEADER]: vapiSignature(secret, timestamp, Buffer.from(body)),
    [TIMESTAMP_HEADER]: timestamp,
  };
}

/** A vendor Call carrying our call id, in the shape the ServerMessage schema accepts. */
export function vapiCall(providerCallId: string, platformCallId: string, extra: Json = {}): Json {
  return {
    id: providerCallId,
    orgId: '7b7f0f0e-0000-4000-8000-000000000001',
    createdAt: '2026-11-29T10:00:00.000Z',
    updatedAt: '2026-11-29T10:00:00.000Z',
    type: 'outboundPhoneCall',
    assistantOverrides: { metadata: { platformCallId } },
    ...extra,
  };
}

/** A status-update message body, validated against the vendor schema. */
export function statusUpdate(call: Json, status: string, at: Date, extra: Json = {}): string {
  const body = { message: { type: 'status-update', status, timestamp: at.getTime(), call, ...extra } };
  assertServerMessage(body);
  return JSON.stringify(body);
}

/** A conversation's artefacts and analysis as Vapi reports them. */
export function conversationFixture(startedAt: Date, seconds: number): Json {
  const start = startedAt.getTime();
  return {
    startedAt: startedAt.toISOString(),
    endedAt: new Date(start + seconds * 1000).toISOString(),
    artifact: {
      recording: { mono: { combinedUrl: 'https://storage.vapi.example/recordings/one.wav' } },
      messages: [
        { role: 'system', message: 'You are a helpful assistant.', time: start, endTime: start, secondsFromStart: 0 },
        {
          role: 'bot',
          message: 'Hello, is this a good time?',
          time: start + 500,
          endTime: start + 2500,
          secondsFromStart: 0.5,
        },
        { role: 'user', message: 'Yes, go ahead.', time: start + 3000, endTime: start + 4000, secondsFromStart: 3 },
      ],
    },
    analysis: {
      summary: 'The contact agreed to a demo.',
      structuredData: { intent: 'book_demo', sentiment: 'positive', outcome: 'demo_booked' },
      successEvaluation: 'true',
    },
  };
}

/** An end-of-call-report body, validated against the vendor schema. */
export function endOfCallReport(call: Json, endedReason: string, at: Date, extra: Json = {}): string {
  const body = {
    message: {
      type: 'end-of-call-report',
      endedReason,
      timestamp: at.getTime(),
      call,
      artifact: {},
      analysis: {},
      ...extra,
    },
  };
  assertServerMessage(body);
  return JSON.stringify(body);
}
