// Bounds a wait on the database with a timer of our own, so a silent server cannot hold a caller.

/**
 * Settles like `pending`, or rejects with `onTimeout()` once `timeoutMs` passed first (0: no bound).
 * A late settlement of `pending` is then ignored.
 */
export function withDeadline<T>(pending: Promise<T>, timeoutMs: number, onTimeout: () => Error): Promise<T> {
  if (timeoutMs <= 0) return pending;
  let timer: NodeJS.Timeout | undefined;
  let lastLook: NodeJS.Immediate | undefined;
  const expired = new Promise<never>((_, reject) => {
    // A timer runs before the event loop reads its sockets: when this process was too busy to read
    // them in time, the answer may be waiting there unread. The rejection comes after that read.
    timer = setTimeout(() => (lastLook = setImmediate(() => reject(onTimeout()))), timeoutMs);
  });
  return Promise.race([pending, expired]).finally(() => {
    clearTimeout(timer);
    clearImmediate(lastLook);
  });
}
