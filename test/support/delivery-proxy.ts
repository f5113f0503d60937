// An HTTPS hop between a test server's webhook deliveries and a receiver that can change an event's
// body on the way and sign it again with the endpoint's secret, so that only the body is wrong.
import https from 'node:https';
import { startHttpsReceiver } from '../../src/tools/https-receiver.js';
import type { ServerCertificate } from '../../src/tools/local-ca.js';
import { signatureHeader } from '../../src/webhooks/delivery/signature.js';
import { verifySignature } from '../../src/webhooks/delivery/verify.js';
import { parseJson } from './json.js';

/** A listening hop: its origin, the receiver origin it forwards to (set by the caller), and how to stop it. */
export interface DeliveryProxy {
  origin: string;
  /** Where deliveries go on, e.g. https://127.0.0.1:4431; nothing is forwarded until it is set. */
  target: string | undefined;
  close(): Promise<void>;
}

/** A delivered event as a mutation edits it: its kind and a data object whose fields may be replaced. */
export interface EditableEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * Starts the hop with `tls` (a certificate the server trusts), trusting `ca` for the receiver. `change`
 * edits a parsed event in place; an edited event is re-signed with whichever of `secrets` signed it.
 */
export async function startDeliveryProxy(
  tls: ServerCertificate,
  ca: string,
  secrets: ReadonlySet<string>,
  change: (event: EditableEvent) => void,
): Promise<DeliveryProxy> {
  const proxy: DeliveryProxy = { origin: '', target: undefined, close: () => Promise.resolve() };
  const receiver = await startHttpsReceiver({
    tls,
    answer: (received, _request, response) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(received.headers))
        if (name === 'content-type' || name.startsWith('x-svc-')) headers[name] = String(value);
      let body = received.rawBody;
      const event = parseJson<EditableEvent>(body);
      change(event);
      const edited = JSON.stringify(event);
      if (edited !== body) {
        const secret = [...secrets].find(
          (candidate) => verifySignature(received.bytes, headers['x-svc-signature'], [candidate]).ok,
        );
        body = edited;
        if (secret) headers['x-svc-signature'] = signatureHeader([secret], Number(headers['x-svc-timestamp']), body);
      }
      if (!proxy.target) {
        response.writeHead(502).end();
        return;
      }
      const onward = https.request(`${proxy.target}${received.path}`, { method: 'POST', headers, ca }, (answer) => {
        answer.resume();
        answer.on('end', () => response.writeHead(answer.statusCode ?? 502).end());
      });
      onward.on('error', () => response.writeHead(502).end());
      onward.end(body);
    },
  });
  proxy.origin = receiver.origin;
  proxy.close = () => receiver.close();
  return proxy;
}
