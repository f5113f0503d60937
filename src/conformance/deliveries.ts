// Judges every webhook delivery the check's receiver got: the event kind is one the spec declares,
// the headers are those of its `webhooks` entry, the body matches the event's schema, and the
// signature verifies with a secret the API handed out.
import type { ReceivedRequest } from '../tools/https-receiver.js';
import { verifySignature } from '../webhooks/delivery/verify.js';
import { declaredEvent, headerValue } from './headers.js';
import type { SchemaJudge } from './judge.js';
import type { SpecDocument } from './spec/document.js';

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** A curl command that sends the delivery again as it arrived, for a receiver or a verifier to look at. */
export function replayCurl(received: ReceivedRequest, url: string): string {
  const parts = ['curl', '-i', '-X', received.method, quote(url)];
  for (const [name, value] of Object.entries(received.headers)) {
    if (name === 'content-type' || name.startsWith('x-svc-')) parts.push('-H', quote(`${name}: ${String(value)}`));
  }
  parts.push('--data-raw', quote(received.rawBody));
  return parts.join(' ');
}

/** The event kind a delivery says it carries (its x-svc-event header, else the body's `event`). */
export function eventKindOf(received: ReceivedRequest): string {
  const header = received.headers['x-svc-event'];
  if (typeof header === 'string') return header;
  try {
    return String((JSON.parse(received.rawBody) as { event?: unknown }).event);
  } catch {
    return '(not JSON)';
  }
}

/** Every problem with one delivery, given the secrets the API returned during the run; empty when it conforms. */
export function deliveryProblems(
  document: SpecDocument,
  judge: SchemaJudge,
  received: ReceivedRequest,
  secrets: readonly string[],
): string[] {
  const kind = eventKindOf(received);
  const declared = declaredEvent(document, kind);
  if (!declared) return [`x-svc-event ${JSON.stringify(kind)} is not an event the spec declares under webhooks`];
  const problems: string[] = [];
  const header = (name: string) => {
    const value = received.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  if (received.method !== 'POST') problems.push(`a delivery must be a POST, got ${received.method}`);
  if (!/^application\/json\b/.test(header('content-type') ?? ''))
    problems.push(`a delivery must be application/json, got ${JSON.stringify(header('content-type'))}`);
  for (const declaredHeader of declared.headers) {
    const text = header(declaredHeader.name);
    if (text === undefined) {
      if (declaredHeader.required) problems.push(`the required header ${declaredHeader.name} is missing`);
      continue;
    }
    for (const message of judge.errors(declaredHeader.pointer, headerValue(declaredHeader, text)))
      problems.push(`header ${declaredHeader.name}: ${JSON.stringify(text)} does not match its schema: ${message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(received.rawBody);
  } catch {
    problems.push('the body is not JSON');
  }
  if (body !== undefined) {
    for (const message of judge.errors(declared.bodyPointer, body))
      problems.push(`the ${kind} body does not match its schema: ${message}`);
    const event = (body as { event?: unknown }).event;
    if (event !== kind) problems.push(`x-svc-event is ${kind} but the body's event is ${JSON.stringify(event)}`);
  }
  // Judged against the moment it arrived: a long run judges its deliveries only at the end.
  const verdict = verifySignature(received.bytes, header('x-svc-signature'), secrets, received.receivedAt);
  if (!verdict.ok) problems.push(`x-svc-signature does not verify with any secret the API returned: ${verdict.reason}`);
  else if (header('x-svc-timestamp') !== String(verdict.timestampMs))
    problems.push("x-svc-timestamp must equal the signature's t");
  return problems;
}
