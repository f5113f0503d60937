// ESM access to the generated Ajv standalone validators (CommonJS): event envelopes and request bodies.
import { createRequire } from 'node:module';
import type * as Generated from '../../../generated/validators.js';
import type { EventKind } from '../outbox.js';
import { projectFile } from '../../project-files.js';

const require = createRequire(import.meta.url);

/** Every validator `npm run gen` compiled from the spec. */
export const validators = require(projectFile('generated/validators.cjs')) as typeof Generated;

/** The spec's envelope schema for each event kind: what a delivery body must satisfy. */
export const envelopeValidators: Record<EventKind, Generated.Validator<unknown>> = {
  'call.completed': validators.CallCompletedEvent,
  'call.failed': validators.CallFailedEvent,
  'call.no_answer': validators.CallNoAnswerEvent,
  'call.busy': validators.CallBusyEvent,
  'call.canceled': validators.CallCanceledEvent,
  'contact.created': validators.ContactCreatedEvent,
  'webhook.test': validators.WebhookTestEvent,
};
