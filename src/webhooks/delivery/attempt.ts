// One delivery attempt: validate the envelope against the spec, sign it, send it, and describe the
// outcome for the delivery log. Knows nothing about the database.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Clock } from '../../app-deps.js';
import { renderEnvelope, type StoredEvent } from './envelope.js';
import { classifyError, describeError, type FailureKind } from './failure.js';
import { parseRetryAfter } from './retry-policy.js';
import { excerptOf, postDelivery } from './send.js';
import { signatureHeader } from './signature.js';

/** Where an attempt goes: the endpoint's URL and its live secrets, newest first. */
export interface AttemptTarget {
  url: string;
  secrets: string[];
}

/** The outcome of one attempt, as the delivery log records it. */
export interface AttemptResult {
  /** The x-svc-delivery header value. */
  id: string;
  attemptedAt: Date;
  statusCode: number | null;
  failureKind: FailureKind | null;
  excerpt: string | null;
  durationMs: number;
  /** A Retry-After delay the receiver asked for with a 429 or 503, in ms. */
  retryAfterMs: number | null;
}

/** What an attempt sends through, reads the time from and logs to. */
export interface AttemptContext {
  dispatcher: Dispatcher;
  clock: Clock;
  logger: Logger;
}

/**
 * Makes one attempt. A payload that breaks the spec's envelope schema is never sent: the result is an
 * `invalid_payload` failure and the problem is logged as an error. Never throws; an aborted `signal`
 * ends the attempt as a failure (the caller decides whether to keep it).
 */
export async function performAttempt(
  context: AttemptContext,
  target: AttemptTarget,
  event: StoredEvent,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const id = randomUUID();
  const attemptedAt = context.clock.now();
  const base = { id, attemptedAt, statusCode: null, retryAfterMs: null };
  const rendered = renderEnvelope(event);
  if (!rendered.ok) {
    context.logger.error(
      { eventId: event.id, kind: event.kind, problem: rendered.problem },
      'webhook payload breaks the contract; not sent',
    );
    return { ...base, failureKind: 'invalid_payload', excerpt: excerptOf(rendered.problem), durationMs: 0 };
  }
  const timestamp = attemptedAt.getTime();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'voice-call-api-webhooks/1',
    'x-svc-event': event.kind,
    'x-svc-delivery': id,
    'x-svc-timestamp': String(timestamp),
    'x-svc-signature': signatureHeader(target.secrets, timestamp, rendered.body),
  };
  const started = performance.now();
  try {
    const answer = await postDelivery(context.dispatcher, target.url, headers, rendered.body, signal);
    const ok = answer.status >= 200 && answer.status < 300;
    const wantsLater = answer.status === 429 || answer.status === 503;
    return {
      ...base,
      statusCode: answer.status,
      failureKind: ok ? null : 'http_status',
      excerpt: answer.excerpt,
      durationMs: Math.round(performance.now() - started),
      retryAfterMs: wantsLater ? parseRetryAfter(answer.retryAfter, attemptedAt) : null,
    };
  } catch (error) {
    return {
      ...base,
      failureKind: classifyError(error),
      excerpt: excerptOf(describeError(error)),
      durationMs: Math.round(performance.now() - started),
    };
  }
}
