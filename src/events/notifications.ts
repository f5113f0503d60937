// A dedicated PostgreSQL connection that LISTENs for new deliveries and reconnects when it drops.
import pg from 'pg';
import type { Logger } from 'pino';
import { DELIVERY_CHANNEL } from './emit.js';

/** A running listener. */
export interface DeliveryListener {
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 2_000;

/**
 * Calls `onWake` for every notification on the deliveries channel and after each (re)connection, so
 * nothing notified while disconnected is missed for long. Connection failures are logged and retried.
 */
export function listenForDeliveries(url: string, onWake: () => void, logger: Logger): DeliveryListener {
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const reconnectLater = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, RECONNECT_DELAY_MS);
    timer.unref();
  };

  const connect = async () => {
    const current = new pg.Client({ connectionString: url });
    client = current;
    current.on('notification', () => onWake());
    current.on('error', (error) => {
      logger.warn({ err: error }, 'webhook delivery listener lost its connection');
      void current.end().catch(() => undefined);
      reconnectLater();
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${DELIVERY_CHANNEL}`);
      if (closed) await current.end();
      else onWake();
    } catch (error) {
      logger.warn({ err: error }, 'webhook delivery listener cannot connect; relying on the periodic sweep');
      await current.end().catch(() => undefined);
      reconnectLater();
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
