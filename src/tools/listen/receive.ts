// What webhook:listen does with one request: verify its signature against the raw body, then answer
// it itself or, with a forward target, answer with what the local app answered.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { verifySignature } from '../../webhooks/delivery/verify.js';
import { summarizeEvent } from '../event-summary.js';
import type { ReceivedRequest } from '../https-receiver.js';
import { forwardDelivery, type ForwardResult } from './forward.js';

/** The largest body the listener reads: a delivery is a few kilobytes, so anything this big is not one. */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/**
 * The answer to a request that is no signed delivery, from its headers alone (its body is then never
 * read), or null: one without an x-svc-signature header is refused with 400.
 */
export function screenDelivery(headers: IncomingHttpHeaders): { status: number; body: string } | null {
  if (typeof headers['x-svc-signature'] === 'string') return null;
  return {
    status: 400,
    body: JSON.stringify({ error: 'no x-svc-signature header: this listener takes signed deliveries only' }),
  };
}

/** One request as the listener saw it, for printing. */
export interface DeliveryRecord {
  at: string;
  event: string | undefined;
  delivery: string | undefined;
  verified: boolean;
  /** Why the signature was rejected. */
  reason?: string;
  /** A one-line description of the event (verified deliveries). */
  summary?: string;
  /** The body: the parsed envelope, or the text when it is not JSON (verified deliveries). */
  body?: unknown;
  /** What the forward target answered (verified deliveries, with a target). */
  forward?: ForwardResult;
}

/** The secrets to accept (read at each request, so a registration made after start counts), where to forward, how to report. */
export interface ReceiveOptions {
  secrets: readonly string[];
  forwardTo?: URL;
  report(record: DeliveryRecord): void;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function describe(bytes: Buffer): { summary: string; body: unknown } | undefined {
  try {
    const envelope = JSON.parse(bytes.toString('utf8')) as { event?: unknown; data?: unknown };
    return { summary: summarizeEvent(String(envelope.event), envelope.data), body: envelope };
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

/** Verifies, reports and answers one request (400 when its signature does not verify); never throws. */
export async function receiveDelivery(
  { bytes, headers }: ReceivedRequest,
  response: ServerResponse,
  options: ReceiveOptions,
): Promise<void> {
  const record: DeliveryRecord = {
    at: new Date().toISOString(),
    event: header(headers, 'x-svc-event'),
    delivery: header(headers, 'x-svc-delivery'),
    verified: false,
  };
  // The bytes exactly as received: never re-serialised JSON.
  const verdict = verifySignature(bytes, header(headers, 'x-svc-signature'), options.secrets);
  if (!verdict.ok) {
    options.report({ ...record, reason: verdict.reason });
    send(response, 400, JSON.stringify({ error: verdict.reason }));
    return;
  }
  const described = describe(bytes);
  const verified: DeliveryRecord = {
    ...record,
    verified: true,
    summary: described?.summary ?? String(record.event),
    body: described?.body ?? bytes.toString('utf8'),
  };
  if (!options.forwardTo) {
    options.report(verified);
    send(response, 200, '{"received":true}');
    return;
  }
  const forward = await forwardDelivery(options.forwardTo, bytes, headers);
  options.report({ ...verified, forward });
  // The service sees what the local app answered, so its delivery log and retries follow the app.
  if (forward.ok) send(response, forward.status, forward.body);
  else send(response, 502, JSON.stringify({ error: `forward to ${options.forwardTo.href} failed: ${forward.error}` }));
}
