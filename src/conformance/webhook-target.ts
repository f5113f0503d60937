// Where the run's webhook endpoints point: the URL the caller gave, or the check's own loopback
// receiver when the server accepts it; otherwise no endpoint is made, and the reason says how to
// enable the webhook cases.
import type { LoopbackReceiver } from './receiver.js';
import type { Session } from './session.js';

/** The URL endpoints are registered with (and the receiver behind it), or why there is none. */
export type WebhookTarget =
  { url: string; receiver?: LoopbackReceiver } | { url: undefined; refusedUrl: string; reason: string };

/**
 * Registers the receiver's URL once to learn whether the server accepts it (and deletes it again).
 * Refused with 400: no target, with the server's reason and the settings or flag that enable the
 * webhook cases. Any other answer leaves the receiver as the target, for the cases to judge.
 */
export async function probeLoopback(session: Session, receiver: LoopbackReceiver): Promise<WebhookTarget> {
  const create = session.operation('createWebhook');
  const remove = session.operation('deleteWebhook');
  const body = { url: receiver.url, events: ['contact.created'] };
  const exchange = create
    ? await session.call(
        create,
        { path: {}, query: {}, headers: {}, body },
        { kind: 'declared' },
        'scenario',
        'probe: is the loopback receiver accepted?',
      )
    : undefined;
  const id = (exchange?.json as { data?: { id?: unknown } } | undefined)?.data?.id;
  if (exchange && exchange.status >= 200 && exchange.status < 300 && typeof id === 'string') {
    if (remove) {
      await session.call(
        remove,
        { path: { id }, query: {}, headers: {} },
        { kind: 'success' },
        'scenario',
        'cleanup: deleteWebhook',
      );
    }
    return { url: receiver.url, receiver };
  }
  // Only a 400 says the URL is refused; any other answer (a full org, a bad key) is judged by the cases.
  if (exchange?.status !== 400) return { url: receiver.url, receiver };
  const message = (exchange.json as { error?: { message?: string } } | undefined)?.error?.message;
  return {
    url: undefined,
    refusedUrl: receiver.url,
    reason:
      `the server refuses the check's loopback receiver ${receiver.url}` +
      `${message ? ` ("${message}")` : ''}, so no webhook endpoint was made; ` +
      `to run the webhook cases start the server (on this machine) with WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 NODE_EXTRA_CA_CERTS=${receiver.caFile}, ` +
      'or pass --webhook-url with an https URL it accepts',
  };
}
