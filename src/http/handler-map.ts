// The handler map: one handler per operationId, checked against the spec's operations at compile time.
import type { HandlerMap } from '../contract/operations.js';
import * as calls from '../calls/handlers.js';
import * as contacts from '../contacts/handlers.js';
import * as campaigns from '../campaigns/handlers.js';
import * as suppressions from '../suppressions/handlers.js';
import * as webhooks from '../webhooks/handlers.js';
import * as agents from '../orgs/handlers.js';

export const handlers = {
  ...calls,
  ...contacts,
  ...suppressions,
  ...campaigns,
  ...webhooks,
  ...agents,
} satisfies HandlerMap;
