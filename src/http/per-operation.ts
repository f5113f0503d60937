// Facts derived from an operation of the spec, worked out on its first request and kept: operations
// never change after start, and the request path should not rebuild them each time.
import type { Operation } from 'openapi-backend';

/** Memoises `derive` per operation object; callers must treat what it returns as read-only. Never throws itself. */
export function perOperation<T>(derive: (operation: Operation) => T): (operation: Operation) => T {
  const derived = new WeakMap<Operation, T>();
  return (operation) => {
    if (!derived.has(operation)) derived.set(operation, derive(operation));
    return derived.get(operation)!;
  };
}
