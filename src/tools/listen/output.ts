// How webhook:listen reports: lines for people, or with --json one JSON object per line (each with a
// `type`: "listening", "endpoint", "forgotten" or "delivery") for scripts.
import { printable } from '../../cli/terminal-text.js';
import type { DeliveryRecord } from './receive.js';

/** Prints what the listener does. */
export interface ListenOutput {
  /** A fact with its human wording and its JSON form. */
  fact(type: string, human: string, json: Record<string, unknown>): void;
  delivery(record: DeliveryRecord): void;
}

function humanDelivery(record: DeliveryRecord): string {
  const head = `${record.at}  ${record.verified ? 'verified' : 'REJECTED'} ${record.event ?? '-'} delivery=${record.delivery ?? '-'}`;
  if (!record.verified) return `${head}: ${record.reason}`;
  const lines = [`${head}: ${record.summary}`];
  if (record.forward) {
    lines.push(
      record.forward.ok
        ? `  forwarded: ${record.forward.status}${record.forward.body ? ` ${record.forward.body.slice(0, 120)}` : ''}`
        : `  forward FAILED: ${record.forward.error}`,
    );
  }
  lines.push(typeof record.body === 'string' ? record.body : JSON.stringify(record.body, null, 2), '');
  return lines.join('\n');
}

/** The output for people (`json` false) or scripts (`json` true), on standard output. */
export function listenOutput(json: boolean): ListenOutput {
  const line = (text: string) => process.stdout.write(`${text}\n`);
  return json
    ? {
        fact: (type, _human, fields) => line(JSON.stringify({ type, ...fields })),
        delivery: (record) => line(JSON.stringify({ type: 'delivery', ...record })),
      }
    : {
        // What a sender posted is shown with its control characters escaped, never acted on by the terminal.
        fact: (_type, human) => line(printable(human, { multiline: true })),
        delivery: (record) => line(printable(humanDelivery(record), { multiline: true })),
      };
}
