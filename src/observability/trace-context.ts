// The request a piece of work belongs to, carried through async calls (AsyncLocalStorage): its id and
// the W3C traceparent it arrived with. The outbox stores the traceparent with each event, so the logs
// of the event's deliveries name the trace that caused them.
import { AsyncLocalStorage } from 'node:async_hooks';

/** What is known about the request being served. */
export interface TraceContext {
  requestId: string;
  /** The incoming W3C traceparent header, when it was well formed. */
  traceparent: string | null;
}

const storage = new AsyncLocalStorage<TraceContext>();

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A W3C traceparent header value (version 00) as given, or null when absent or malformed. Never throws. */
export function parseTraceparent(value: string | undefined): string | null {
  const trimmed = value?.trim().toLowerCase();
  return trimmed && TRACEPARENT.test(trimmed) ? trimmed : null;
}

/** Runs `work` with `context` as the current trace. */
export function runInTrace<T>(context: TraceContext, work: () => T): T {
  return storage.run(context, work);
}

/** The trace of the request being served, or undefined outside one (workers, the CLI). */
export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}
