// The handler map: one handler per operationId, checked against the spec's operations at compile time.
import type { HandlerMap } from '../http/types.js';
import * as calls from './calls.js';
import * as contacts from './contacts.js';
import * as webhooks from './webhooks.js';

export const handlers = {
  ...calls,
  ...contacts,
  ...webhooks,
} satisfies HandlerMap;
