// The W3C trace context a request arrives with. Handlers pass the request's traceparent explicitly to
// the changes that emit events (no AsyncLocalStorage: it would put a hook on every promise of every
// request); the outbox stores it with each event, so the logs of the event's deliveries name the
// trace that caused them.

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A W3C traceparent header value (version 00) as given, or null when absent or malformed. Never throws. */
export function parseTraceparent(value: string | undefined): string | null {
  const trimmed = value?.trim().toLowerCase();
  return trimmed && TRACEPARENT.test(trimmed) ? trimmed : null;
}
