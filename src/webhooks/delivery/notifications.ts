// A dedicated PostgreSQL connection that LISTENs for new deliveries and for endpoint deletions and
// switch-offs, and reconnects when it drops, backing off while the database is down (an outage is
// logged once when it begins and once when it ends).
import pg from 'pg';
import type { Logger } from 'pino';
import { DELETION_CHANNEL, DELIVERY_CHANNEL, SWITCH_OFF_CHANNEL } from '../channels.js';
import { OutageTracker } from '../../database/outage.js';

/** A running listener. */
export interface DeliveryListener {
  close(): Promise<void>;
}

/** What a listener reports. */
export interface DeliveryListenerHandlers {
  /** New deliveries may be due; also called after each (re)connection, so nothing notified meanwhile waits for long. */
  onDelivery(): void;
  /** A deletion of the endpoint `webhookId` has begun (a missed one is found by the in-flight watch within a second). */
  onDeletion(webhookId: string): void;
  /** The endpoint `webhookId` was switched off (a missed one is found as a deletion is). */
  onSwitchOff(webhookId: string): void;
}

/**
 * Reports every notification on the deliveries, deletions and switch-offs channels. Connection failures are
 * retried with backoff; an outage is logged when it begins and when it ends.
 */
export function listenForDeliveries(url: string, handlers: DeliveryListenerHandlers, logger: Logger): DeliveryListener {
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const outage = new OutageTracker(logger, 'webhook delivery listener');

  const reconnectLater = (error: unknown) => {
    const wait = outage.failed(error);
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, wait);
    timer.unref();
  };

  const connect = async () => {
    const current = new pg.Client({ connectionString: url });
    client = current;
    current.on('notification', (message) => {
      if (message.channel === DELETION_CHANNEL) {
        if (message.payload) handlers.onDeletion(message.payload);
      } else if (message.channel === SWITCH_OFF_CHANNEL) {
        if (message.payload) handlers.onSwitchOff(message.payload);
      } else {
        handlers.onDelivery();
      }
    });
    current.on('error', (error) => {
      void current.end().catch(() => undefined);
      reconnectLater(error);
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${DELIVERY_CHANNEL}; LISTEN ${DELETION_CHANNEL}; LISTEN ${SWITCH_OFF_CHANNEL}`);
      outage.succeeded();
      if (closed) await current.end();
      else handlers.onDelivery();
    } catch (error) {
      // Meanwhile the periodic sweep finds new deliveries.
      await current.end().catch(() => undefined);
      reconnectLater(error);
    }
  };

  void connect();
  return {
    close: async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
