// A farm of HTTPS webhook receivers on 127.0.0.1 (src/tools/https-receiver.ts, keep-alive) that records
// when each event first reached each of them. Healthy ones answer 200 at once; a hanging one never answers.
import { startHttpsReceiver, type HttpsReceiver } from '../../src/tools/https-receiver.js';
import type { ServerCertificate } from '../../src/tools/local-ca.js';

/** The first arrival of one event at one receiver. */
export interface Arrival {
  receiver: number;
  eventId: string;
  /** Milliseconds from the event's created_at to the arrival. */
  latencyMs: number;
  at: number;
}

/** A set of receivers and what reached them. */
export interface ReceiverFarm {
  urls: string[];
  healthy: boolean[];
  /** First arrivals, in order. */
  arrivals: Arrival[];
  /** Every request each receiver got (retries and duplicates included). */
  requestCounts: number[];
  /** Stops every receiver. */
  close(): Promise<void>;
}

/** Starts `count` receivers with `tls`; those whose index is in `hanging` never answer. Rejects if one cannot start. */
export async function startReceivers(
  tls: ServerCertificate,
  count: number,
  hanging: ReadonlySet<number>,
): Promise<ReceiverFarm> {
  const seen = new Set<string>();
  const receivers: HttpsReceiver[] = [];
  const farm: ReceiverFarm = {
    urls: [],
    healthy: [],
    arrivals: [],
    requestCounts: new Array<number>(count).fill(0),
    close: async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    },
  };
  for (let index = 0; index < count; index += 1) {
    const healthy = !hanging.has(index);
    const receiver = await startHttpsReceiver({
      tls,
      keepAliveTimeout: 65_000,
      answer: (received, _request, response) => {
        farm.requestCounts[index]! += 1;
        const envelope = JSON.parse(received.rawBody) as { id: string; created_at: string };
        const key = `${index}:${envelope.id}`;
        if (!seen.has(key)) {
          seen.add(key);
          farm.arrivals.push({
            receiver: index,
            eventId: envelope.id,
            latencyMs: received.receivedAt - Date.parse(envelope.created_at),
            at: received.receivedAt,
          });
        }
        if (healthy) response.end('ok');
      },
    });
    receivers.push(receiver);
    farm.urls.push(`${receiver.origin}/hooks/${index}`);
    farm.healthy.push(healthy);
  }
  return farm;
}
