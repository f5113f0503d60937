// What every sender in a process shares: the SSRF-guarded HTTP agent, the registry of sends in flight,
// the batching writer of attempts, the name its leases carry and how long they last. Built once per
// process by the composition root.
import type { Agent } from 'undici';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../database/connect.js';
import { findStoppedWebhooks } from '../queries.js';
import { parseAllowlist } from './address-policy.js';
import { createGuardedAgent } from './guarded-agent.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { InFlightSends } from './in-flight.js';

/** A process's delivery machinery. */
export interface DeliveryRuntime {
  dispatcher: Agent;
  inFlight: InFlightSends;
  /** Writes finished attempts to the delivery log, several per round trip when busy. */
  recorder: AttemptRecorder;
  /** The lease owner written on every claim this process takes (its instance id). */
  owner: string;
  /** How long a claim lasts; every send ends before it does. */
  leaseMs: number;
  /** Test sends this process has in flight (capped by TEST_SENDS_PER_PROCESS). */
  testSends: { inFlight: number };
  /** Closes the agent's connections, ending any request still open. */
  close(): Promise<void>;
}

/** Builds the runtime from the configuration; throws on an invalid WEBHOOK_PRIVATE_ALLOWLIST range. */
export function createDeliveryRuntime(
  db: Db,
  config: Pick<Config, 'webhookPrivateAllowlist' | 'webhookCaCerts' | 'webhookLeaseMs'>,
  logger: Logger,
  owner: string,
): DeliveryRuntime {
  const dispatcher = createGuardedAgent({
    allowlist: parseAllowlist(config.webhookPrivateAllowlist),
    caCerts: config.webhookCaCerts,
  });
  return {
    dispatcher,
    inFlight: new InFlightSends(
      (ids) => findStoppedWebhooks(db, ids),
      (error) =>
        logger.warn({ err: error }, 'could not look for deletions or switch-offs of endpoints with sends in flight'),
    ),
    recorder: new AttemptRecorder(db),
    owner,
    leaseMs: config.webhookLeaseMs,
    testSends: { inFlight: 0 },
    close: () => dispatcher.destroy(),
  };
}
