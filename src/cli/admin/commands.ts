// Every operator command, grouped by the resource it acts on, in the order help lists them.
import type { CommandGroup } from './command.js';
import { orgCommands } from './orgs.js';
import { agentCommands } from './agents.js';
import { keyCommands } from './keys.js';
import { planCommands } from './plans.js';
import { creditCommands } from './credits.js';
import { contactCommands } from './contacts.js';
import { deliveryCommands, redeliverCommands, replayCommands } from './deliveries.js';
import { webhookCommands } from './webhooks.js';
import { retentionCommands } from './retention.js';
import { userCommands } from './users.js';

/** The command groups of `voice-call-api admin`. */
export const GROUPS: CommandGroup[] = [
  orgCommands,
  agentCommands,
  keyCommands,
  userCommands,
  planCommands,
  creditCommands,
  contactCommands,
  webhookCommands,
  deliveryCommands,
  redeliverCommands,
  replayCommands,
  retentionCommands,
];
